/**
 * Indexes of the older layout: one whole FTS5 file per user, named by a pointer item
 * `{ version, key }` (no revision). The current adapter reads such a user as empty, so the
 * upgrade marks the user's sessions for indexing (the caller does, from the store's heads) and
 * then replaces the item with an empty pointer of the current layout that retires the old file:
 * the sweep removes it once past its minimum age. Each step is safe to repeat after a crash:
 * the item stays old until the marks are written.
 */
import { randomBytes } from "node:crypto";
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { type AwsConnection, awsErrorName, documentClient } from "@pisync/store/aws";
import { GSI, POINTER_SK, USERS_PARTITION, userPk } from "./items.js";
import { pointerItem } from "./pointers.js";

/** A user's index of the older layout: the object of its whole file. */
export interface LegacyIndex {
  userId: string;
  key: string;
}

/** Finds and retires indexes of the older layout. */
export class LegacyIndexes {
  private readonly db: DynamoDBDocumentClient;

  constructor(
    connection: AwsConnection,
    private readonly table: string,
  ) {
    this.db = documentClient(connection);
  }

  /** The user's index of the older layout, if that is what its pointer item is. */
  async of(userId: string): Promise<LegacyIndex | undefined> {
    const item = await pointerItem(this.db, this.table, userId);
    return item && typeof item.rev !== "number" && typeof item.key === "string" ? { userId, key: item.key } : undefined;
  }

  /** Every user whose index is of the older layout (a query of the pointers, filtered on the missing revision). */
  async all(): Promise<LegacyIndex[]> {
    const found: LegacyIndex[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: GSI,
          KeyConditionExpression: "gsi1pk = :pk",
          FilterExpression: "attribute_not_exists(rev) AND attribute_exists(#key)",
          ExpressionAttributeNames: { "#key": "key" },
          ExpressionAttributeValues: { ":pk": USERS_PARTITION },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) found.push({ userId: item.gsi1sk as string, key: item.key as string });
      start = page.LastEvaluatedKey;
    } while (start);
    return found;
  }

  /**
   * Replaces the old item by an empty pointer of the current layout that retires the old file
   * (call it once the user's sessions are marked). False when the item is no longer that old
   * one (another instance upgraded it first).
   */
  async retire(legacy: LegacyIndex): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: userPk(legacy.userId),
            sk: POINTER_SK,
            rev: 1,
            epoch: randomBytes(8).toString("hex"),
            log: [],
            retired: [{ key: legacy.key, at: Date.now() }],
            gsi1pk: USERS_PARTITION,
            gsi1sk: legacy.userId,
          },
          ConditionExpression: "attribute_not_exists(rev) AND #key = :key",
          ExpressionAttributeNames: { "#key": "key" },
          ExpressionAttributeValues: { ":key": legacy.key },
        }),
      );
      return true;
    } catch (error) {
      if (awsErrorName(error) === "ConditionalCheckFailedException") return false;
      throw error;
    }
  }
}
