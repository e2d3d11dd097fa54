/**
 * Durable marks of sessions written since they were last indexed, as items in the metadata
 * table (see `items.ts`). A write leaves its mark before it is answered; an indexer that brought
 * the session up to date removes the mark it read, and only that one (a conditional delete on
 * the mark's token), so a write marked while it was indexing is never lost. Marks are read a
 * bounded number at a time, oldest due first: writes' marks before a rebuild's, and a session
 * that failed is due again only after a wait that doubles at each failure ({@link SearchMarks.defer}).
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
import { type AwsConnection, awsErrorName, documentClient, untilProcessed } from "@pisync/store/aws";
import { DUE_MARKS_PARTITION, GSI, MARK_SK_PREFIX, MARKS_PARTITION, REBUILD_MARKS_PARTITION, userPk } from "./items.js";

/** A marked session. */
export interface SessionMark {
  userId: string;
  sessionId: string;
  /** Which mark this is: a later write of the session leaves another token. */
  token: string;
  /** When it is due (epoch ms; 0 for a mark written before marks kept it): older ones are indexed first. */
  at: number;
  /** Times its session failed to index in a row (0: never). */
  attempts: number;
}

/** A bounded read of due marks. */
export interface DueMarks {
  marks: SessionMark[];
  /** Whether more due marks may be left past these. */
  more: boolean;
}

/** Items per BatchWriteItem (DynamoDB's limit), and batches sent at once. */
const BATCH_ITEMS = 25;
const BATCHES_AT_ONCE = 4;
/** The wait before a session that failed is due again: doubled at each failure, up to an hour (as `SearchIndexer`'s). */
const RETRY_FIRST_MS = 10_000;
const RETRY_MAX_MS = 3_600_000;

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
    await this.db.send(
      new PutCommand({ TableName: this.table, Item: markItem(userId, sessionId, this.nextAt(), DUE_MARKS_PARTITION) }),
    );
  }

  /** Marks many sessions of a user (a rebuild, an upgrade): batches of 25, a few at once; due after writes' marks. */
  async markMany(userId: string, sessionIds: readonly string[]): Promise<void> {
    // Times given in the list's order: the scheduled pass indexes them in it (as the embedded rebuild does).
    const batches: string[][] = [];
    for (let i = 0; i < sessionIds.length; i += BATCH_ITEMS) batches.push(sessionIds.slice(i, i + BATCH_ITEMS));
    for (let i = 0; i < batches.length; i += BATCHES_AT_ONCE) {
      await Promise.all(batches.slice(i, i + BATCHES_AT_ONCE).map((batch) => this.writeBatch(userId, batch)));
    }
  }

  /**
   * One BatchWriteItem, its unprocessed items sent again (the table is throttling: see `untilProcessed`).
   * @throws StorageUnavailableError when some are still unprocessed after the last sending
   */
  private async writeBatch(userId: string, sessionIds: readonly string[]): Promise<void> {
    const requests = sessionIds.map((id) => ({
      PutRequest: { Item: markItem(userId, id, this.nextAt(), REBUILD_MARKS_PARTITION) },
    }));
    const write = async (pending: unknown[]) => {
      const answer: { UnprocessedItems?: Record<string, unknown[]> } = await this.db.send(
        new BatchWriteCommand({ RequestItems: { [this.table]: pending as never } }),
      );
      return answer.UnprocessedItems?.[this.table];
    };
    await untilProcessed(requests, write, `of ${userId}'s marks`);
  }

  /** A user's marked sessions (at most `limit`, in the order of their ids), due or not. */
  async ofUser(userId: string, limit = Number.POSITIVE_INFINITY): Promise<SessionMark[]> {
    return (
      await this.query(
        {
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
          ExpressionAttributeValues: { ":pk": userPk(userId), ":prefix": MARK_SK_PREFIX },
          ConsistentRead: true,
        },
        limit,
      )
    ).marks;
  }

  /**
   * At most `limit` marks due by `now`, of every user, oldest first: writes' marks, then a
   * rebuild's, then marks of the earlier layout (for the scheduled pass: it never reads them all).
   */
  async due(limit: number, now = Date.now()): Promise<DueMarks> {
    const marks: SessionMark[] = [];
    const byTime = (partition: string) => ({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk AND gsi1sk < :now",
      ExpressionAttributeValues: { ":pk": partition, ":now": dueKey(now + 1) },
    });
    for (const input of [
      byTime(DUE_MARKS_PARTITION),
      byTime(REBUILD_MARKS_PARTITION),
      { IndexName: GSI, KeyConditionExpression: "gsi1pk = :pk", ExpressionAttributeValues: { ":pk": MARKS_PARTITION } },
    ]) {
      if (marks.length >= limit) return { marks, more: true };
      const page = await this.query(input, limit - marks.length);
      marks.push(...page.marks);
      if (page.more) return { marks, more: true };
    }
    return { marks, more: false };
  }

  /**
   * Puts off a mark whose session failed to index: due again after a wait that doubles at each
   * failure (10 s up to an hour), so a bounded read reaches the marks after it and a session
   * that keeps failing is tried rarely, by every instance. Nothing happens if the session was
   * written meanwhile (its new mark is due now). @returns when it is due again
   */
  async defer(mark: SessionMark, now = Date.now()): Promise<number> {
    const attempts = mark.attempts + 1;
    const at = now + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (attempts - 1));
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...markItem(mark.userId, mark.sessionId, at, DUE_MARKS_PARTITION), token: mark.token, attempts },
          ConditionExpression: "#token = :token",
          ExpressionAttributeNames: { "#token": "token" },
          ExpressionAttributeValues: { ":token": mark.token },
        }),
      );
    } catch (error) {
      if (awsErrorName(error) !== "ConditionalCheckFailedException") throw error;
    }
    return at;
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

  close(): void {
    this.db.destroy();
  }

  /** Now, or just after the last mark's time. */
  private nextAt(): number {
    this.lastAt = Math.max(Date.now(), this.lastAt + 1);
    return this.lastAt;
  }

  /** Up to `limit` marks of a query, a page at a time; `more` when the query was not read to its end. */
  private async query(
    input: Omit<ConstructorParameters<typeof QueryCommand>[0], "TableName">,
    limit: number,
  ): Promise<DueMarks> {
    const marks: SessionMark[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const left = limit - marks.length;
      const page = await this.db.send(
        new QueryCommand({
          ...input,
          TableName: this.table,
          ExclusiveStartKey: start,
          ...(Number.isFinite(left) ? { Limit: left } : {}),
        }),
      );
      for (const item of page.Items ?? []) marks.push(markOf(item));
      start = page.LastEvaluatedKey;
    } while (start && marks.length < limit);
    return { marks, more: start !== undefined };
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
  return markItem(userId, sessionId, Date.parse(updatedAt) || Date.now(), DUE_MARKS_PARTITION, commit.token);
}

/** A due time as a key that sorts as the time does. */
const dueKey = (at: number) => String(at).padStart(15, "0");

/** A mark's item: a fresh token (unless given), and when it is due. */
function markItem(
  userId: string,
  sessionId: string,
  at: number,
  partition: string,
  token = randomBytes(8).toString("hex"),
) {
  return {
    pk: userPk(userId),
    sk: `${MARK_SK_PREFIX}${sessionId}`,
    token,
    at,
    gsi1pk: partition,
    gsi1sk: `${dueKey(at)}#${userId}#${sessionId}`,
  };
}

/** A mark as read (either layout: the ids come from the item's keys). */
function markOf(item: Record<string, unknown>): SessionMark {
  return {
    userId: String(item.pk).slice(userPk("").length),
    sessionId: String(item.sk).slice(MARK_SK_PREFIX.length),
    token: item.token as string,
    at: typeof item.at === "number" ? item.at : 0,
    attempts: typeof item.attempts === "number" ? item.attempts : 0,
  };
}
