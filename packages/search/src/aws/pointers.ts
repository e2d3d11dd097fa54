/**
 * The pointer item of each user's index (see `items.ts`): which base and which log entries make
 * the index now. Every change of it is a conditional write on its revision, so one writer at a
 * time moves it: the one whose write fails read an older revision and starts again from the new one.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import { type AwsConnection, awsErrorName, documentClient } from "@pisync/store/aws";
import { newWriteToken, WRITE_TOKEN, writeIf } from "./conditional.js";
import { COMPACTION_SK, COMPACTIONS_PARTITION, GSI, POINTER_SK, USERS_PARTITION, userPk } from "./items.js";

/** A change of the index, in the log: the batches that applied, or a session removed. */
export interface LogEntry {
  /** The change's number: the base's `seq` plus its place in the log. */
  seq: number;
  /** The object that holds it (`log.ts`). */
  key: string;
  /** Its size, for the compaction threshold. */
  bytes: number;
}

/** An object that stops being named (folded into a base, or a replaced manifest), and since when. */
export interface Retired {
  key: string;
  /** Epoch ms: readers that read the pointer before this may still fetch it for a while. */
  at: number;
}

/** A user's index: a base (a manifest of chunks, `manifest.ts`) and the changes after it. */
export interface Pointer {
  /** Counts every write of the item: the condition of the next one. */
  rev: number;
  /** Names this history of the index (a cleared index starts another): a copy of another history is dropped. */
  epoch: string;
  /** The base's manifest and the last change folded into it; none before the first compaction. */
  base?: { key: string; seq: number };
  /** Changes after the base, in order (seq base.seq + 1, + 2, …). */
  log: LogEntry[];
  /** What the sweep may remove once old enough (`sweep.ts`). */
  retired: Retired[];
}

/** A compaction request's place in gsi1: due time (fixed width, so in order), then the user. */
const dueKey = (at: number, userId: string) => `${at.toString().padStart(15, "0")}#${userId}`;

/** The last change a pointer names. */
export const headSeq = (pointer: Pointer): number => pointer.log.at(-1)?.seq ?? pointer.base?.seq ?? 0;

/** A pointer write whose answer was lost: it may or may not have applied. */
export class AmbiguousPointerWrite extends Error {}

/** A user's pointer item as stored (either layout), read consistently. */
export async function pointerItem(
  db: DynamoDBDocumentClient,
  table: string,
  userId: string,
): Promise<Record<string, unknown> | undefined> {
  const { Item: item } = await db.send(
    new GetCommand({ TableName: table, Key: { pk: userPk(userId), sk: POINTER_SK }, ConsistentRead: true }),
  );
  return item;
}

/** The pointer items, in the metadata table. */
export class Pointers {
  private readonly db: DynamoDBDocumentClient;

  constructor(
    connection: AwsConnection,
    private readonly table: string,
  ) {
    this.db = documentClient(connection);
  }

  /** The user's pointer, read consistently; undefined when the user has no index. */
  async get(userId: string): Promise<Pointer | undefined> {
    const item = await pointerItem(this.db, this.table, userId);
    if (!item || typeof item.rev !== "number") return undefined; // none, or an index of the older layout (rebuilt)
    return {
      rev: item.rev,
      epoch: String(item.epoch),
      base: item.base as Pointer["base"],
      log: (item.log as LogEntry[] | undefined) ?? [],
      retired: (item.retired as Retired[] | undefined) ?? [],
    };
  }

  /**
   * Writes `to` if the item is still at `from`'s revision (absent when `from` is undefined):
   * false when another writer moved it first (this write's own first attempt, applied with its
   * answer lost, is told apart by its token). @throws AmbiguousPointerWrite (cause: the error)
   * when the write failed without a "no": it may have applied, and only a read of the item tells.
   */
  async move(userId: string, from: Pointer | undefined, to: Pointer): Promise<boolean> {
    const key = { pk: userPk(userId), sk: POINTER_SK };
    const token = newWriteToken();
    try {
      const put = new PutCommand({
        TableName: this.table,
        Item: {
          ...key,
          rev: to.rev,
          epoch: to.epoch,
          ...(to.base ? { base: to.base } : {}),
          log: to.log,
          retired: to.retired,
          gsi1pk: USERS_PARTITION,
          gsi1sk: userId,
          [WRITE_TOKEN]: token,
        },
        // An item without a revision is an index of the older layout (one whole file): replaced.
        ConditionExpression: from ? "rev = :rev" : "attribute_not_exists(rev)",
        ExpressionAttributeValues: from ? { ":rev": from.rev } : undefined,
      });
      return await writeIf(this.db, put, { table: this.table, key, token });
    } catch (error) {
      throw new AmbiguousPointerWrite(`the search pointer of a user may or may not have moved`, { cause: error });
    }
  }

  /** Removes the user's pointer (the index is then empty). */
  async delete(userId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: { pk: userPk(userId), sk: POINTER_SK } }));
  }

  /** Every user with a pointer. */
  async users(): Promise<string[]> {
    const users: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: GSI,
          KeyConditionExpression: "gsi1pk = :pk",
          ExpressionAttributeValues: { ":pk": USERS_PARTITION },
          ProjectionExpression: "gsi1sk",
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) users.push(item.gsi1sk as string);
      start = page.LastEvaluatedKey;
    } while (start);
    return users;
  }

  /**
   * Asks a scheduled pass to fold the user's log from `at` on (a change took it past the
   * threshold on a request's path, which does not wait for a fold). One item per user: asked
   * again, it keeps its place, unless `replace` (a fold that failed puts its request off).
   */
  async requestCompaction(userId: string, at = Date.now(), options: { replace?: boolean } = {}): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: userPk(userId),
            sk: COMPACTION_SK,
            at,
            gsi1pk: COMPACTIONS_PARTITION,
            gsi1sk: dueKey(at, userId),
          },
          ConditionExpression: options.replace ? undefined : "attribute_not_exists(pk)",
        }),
      );
    } catch (error) {
      if (awsErrorName(error) !== "ConditionalCheckFailedException") throw error;
    }
  }

  /** The users whose compaction was asked for and is due by `now`, oldest request first: `limit` at most. */
  async compactionsDue(limit: number, now = Date.now()): Promise<string[]> {
    const page = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: GSI,
        KeyConditionExpression: "gsi1pk = :pk AND gsi1sk < :after",
        ExpressionAttributeValues: { ":pk": COMPACTIONS_PARTITION, ":after": dueKey(now + 1, "") },
        ProjectionExpression: "gsi1sk",
        Limit: limit,
      }),
    );
    return (page.Items ?? []).map((item) => String(item.gsi1sk).slice(16));
  }

  /** Forgets the user's compaction request (its log was folded). */
  async compactionDone(userId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: { pk: userPk(userId), sk: COMPACTION_SK } }));
  }

  close(): void {
    this.db.destroy();
  }
}
