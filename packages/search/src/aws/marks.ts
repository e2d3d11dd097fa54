/**
 * Durable marks of sessions written since they were last indexed, as items in the metadata
 * table (see `items.ts`). A write leaves its mark before it is answered; an indexer that brought
 * the session up to date removes the mark it read, and only that one (a conditional delete on
 * the mark's token), so a write marked while it was indexing is never lost.
 */
import { randomBytes } from "node:crypto";
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { type AwsConnection, awsErrorName, documentClient } from "@pisync/store/aws";
import { GSI, MARK_SK_PREFIX, MARKS_PARTITION, userPk } from "./items.js";

/** A marked session. */
export interface SessionMark {
  userId: string;
  sessionId: string;
  /** Which mark this is: a later write of the session leaves another token. */
  token: string;
}

/** The marks, in one table. */
export class SearchMarks {
  private readonly db: DynamoDBDocumentClient;

  constructor(
    connection: AwsConnection,
    private readonly table: string,
  ) {
    this.db = documentClient(connection);
  }

  /** Marks a session written (replacing its earlier mark, if any). */
  async mark(userId: string, sessionId: string): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          pk: userPk(userId),
          sk: `${MARK_SK_PREFIX}${sessionId}`,
          token: randomBytes(8).toString("hex"),
          gsi1pk: MARKS_PARTITION,
          gsi1sk: `${userId}#${sessionId}`,
        },
      }),
    );
  }

  /** A user's marked sessions. */
  async ofUser(userId: string): Promise<SessionMark[]> {
    return this.query({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": userPk(userId), ":prefix": MARK_SK_PREFIX },
      ConsistentRead: true,
    });
  }

  /** Every marked session, of every user (for the scheduled pass). */
  async all(): Promise<SessionMark[]> {
    return this.query({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": MARKS_PARTITION },
    });
  }

  /** Removes a mark if it is still the one read (a later write's mark stays). */
  async done(mark: SessionMark): Promise<void> {
    try {
      await this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { pk: userPk(mark.userId), sk: `${MARK_SK_PREFIX}${mark.sessionId}` },
          ConditionExpression: "#token = :token",
          ExpressionAttributeNames: { "#token": "token" },
          ExpressionAttributeValues: { ":token": mark.token },
        }),
      );
    } catch (error) {
      if (awsErrorName(error) !== "ConditionalCheckFailedException") throw error;
    }
  }

  private async query(input: Omit<ConstructorParameters<typeof QueryCommand>[0], "TableName">) {
    const marks: SessionMark[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(new QueryCommand({ ...input, TableName: this.table, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) {
        const [userId, sessionId] = String(item.gsi1sk).split("#") as [string, string];
        marks.push({ userId, sessionId, token: item.token as string });
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return marks;
  }
}
