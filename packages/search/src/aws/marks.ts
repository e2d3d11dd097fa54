/**
 * Durable marks of sessions written since they were last indexed, as items in the metadata
 * table (see `items.ts`). A write leaves its mark before it is answered; an indexer that brought
 * the session up to date removes the mark it read, and only that one (a conditional delete on
 * the mark's token), so a write marked while it was indexing is never lost.
 */
import { randomBytes } from "node:crypto";
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import type { Commit } from "@pisync/store";
import { type AwsConnection, awsErrorName, documentClient } from "@pisync/store/aws";
import { GSI, MARK_SK_PREFIX, MARKS_PARTITION, userPk } from "./items.js";

/** A marked session. */
export interface SessionMark {
  userId: string;
  sessionId: string;
  /** Which mark this is: a later write of the session leaves another token. */
  token: string;
  /** When it was written (epoch ms; 0 for a mark written before marks kept it): older ones are indexed first. */
  at: number;
}

/** Items per BatchWriteItem (DynamoDB's limit), and batches sent at once. */
const BATCH_ITEMS = 25;
const BATCHES_AT_ONCE = 4;

/** The marks, in one table. */
export class SearchMarks {
  private readonly db: DynamoDBDocumentClient;
  /** The last mark's time given here: each later mark gets a later one (a rebuild's marks keep their order). */
  private lastAt = 0;

  constructor(
    connection: AwsConnection,
    private readonly table: string,
  ) {
    this.db = documentClient(connection);
  }

  /** Marks a session written (replacing its earlier mark, if any). */
  async mark(userId: string, sessionId: string): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.table, Item: markItem(userId, sessionId, this.nextAt()) }));
  }

  /** Marks many sessions of a user (a rebuild, an upgrade): batches of 25, a few at once. */
  async markMany(userId: string, sessionIds: readonly string[]): Promise<void> {
    // Times given in the list's order: the scheduled pass indexes them in it (as the embedded rebuild does).
    const batches: string[][] = [];
    for (let i = 0; i < sessionIds.length; i += BATCH_ITEMS) batches.push(sessionIds.slice(i, i + BATCH_ITEMS));
    for (let i = 0; i < batches.length; i += BATCHES_AT_ONCE) {
      await Promise.all(batches.slice(i, i + BATCHES_AT_ONCE).map((batch) => this.writeBatch(userId, batch)));
    }
  }

  /** One BatchWriteItem, its unprocessed items sent again (after a short wait: the table is throttling). */
  private async writeBatch(userId: string, sessionIds: readonly string[]): Promise<void> {
    let requests: unknown[] | undefined = sessionIds.map((id) => ({
      PutRequest: { Item: markItem(userId, id, this.nextAt()) },
    }));
    for (let attempt = 0; requests?.length; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
      const answer: { UnprocessedItems?: Record<string, unknown[]> } = await this.db.send(
        new BatchWriteCommand({ RequestItems: { [this.table]: requests as never } }),
      );
      requests = answer.UnprocessedItems?.[this.table];
    }
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

  /** Now, or just after the last mark's time. */
  private nextAt(): number {
    this.lastAt = Math.max(Date.now(), this.lastAt + 1);
    return this.lastAt;
  }

  private async query(input: Omit<ConstructorParameters<typeof QueryCommand>[0], "TableName">) {
    const marks: SessionMark[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(new QueryCommand({ ...input, TableName: this.table, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) {
        const [userId, sessionId] = String(item.gsi1sk).split("#") as [string, string];
        marks.push({ userId, sessionId, token: item.token as string, at: typeof item.at === "number" ? item.at : 0 });
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return marks;
  }
}

/**
 * The mark of a commit's session, for the store to put in the commit's own transaction
 * (`awsStores({ commitItems })`): the mark then exists exactly when the commit does, with no
 * write of its own. The same for every sending of one commit (its token, its head's time), as
 * the commit's idempotency token requires.
 */
export function commitMark(commit: Commit): Record<string, unknown> {
  const { userId, sessionId, updatedAt } = commit.head;
  return markItem(userId, sessionId, Date.parse(updatedAt) || Date.now(), commit.token);
}

/** A mark's item: a fresh token (unless given), and when. */
function markItem(userId: string, sessionId: string, at: number, token = randomBytes(8).toString("hex")) {
  return {
    pk: userPk(userId),
    sk: `${MARK_SK_PREFIX}${sessionId}`,
    token,
    at,
    gsi1pk: MARKS_PARTITION,
    gsi1sk: `${userId}#${sessionId}`,
  };
}
