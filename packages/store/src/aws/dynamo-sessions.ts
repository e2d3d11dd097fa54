/**
 * Session heads and what their commits write, on the metadata table (see {@link SessionStore}).
 * A commit is one TransactWriteItems: the head put, conditional on its revision, with its list
 * and filter entries (the cards port's), the new index pages, any archived generation and the
 * mark of the days whose usage it changes; all or nothing. A failed condition comes back with
 * the stored head (ReturnValuesOnConditionCheckFailure), so a conflict costs no second read.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { ConditionalCheckFailedException, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { PutCommand, ScanCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { cardOf } from "../card.js";
import { RevisionConflictError, StorageUnavailableError } from "../errors.js";
import type { Commit, GenerationState, IndexPage, SessionHead, SessionStore } from "../ports-sessions.js";
import { dayUsagesOf } from "../usage-days.js";
import { filterItems, filterSkPrefix, type HeadReader, listItem, listKey } from "./dynamo-cards.js";
import { type DynamoShareStore, shareUpdate } from "./dynamo-shares.js";
import { dataOf, GSI, type Item, key, type MetaTable, TRANSACTION_ITEMS, type TransactItem } from "./meta-table.js";
import type { UsageDayItems } from "./usage-day-items.js";

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const sessionPk = (userId: string, sessionId: string) => `P#${userId}#${sessionId}`;
const headKey = (userId: string, sessionId: string) => key(`U#${userId}`, `S#${sessionId}`);
/** Reads of a head a delete makes while appends move it (see `deleteSession`). */
const DELETE_TRIES = 4;

/** A listing cursor is the last key of a page; one from a client is checked to be a key of that listing. */
function decodeCursor(cursor: string | undefined, gsi1pk: string): Item | undefined {
  if (!cursor) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Record<string, unknown>;
    const names = ["pk", "sk", "gsi1pk", "gsi1sk"];
    const valid =
      Object.keys(parsed).length === names.length &&
      names.every((name) => typeof parsed[name] === "string") &&
      parsed.gsi1pk === gsi1pk;
    return valid ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Items put in the same transaction as a commit (say a search mark): they exist exactly when the
 * commit does, with no round trip of their own. Called for each sending of a commit, it must
 * give the same items for the same commit (its idempotency token requires the same request).
 */
export type CommitItems = (commit: Commit) => Item[];

/** The sessions port on the metadata table. */
export class DynamoSessionStore implements SessionStore {
  private readonly readHead: HeadReader;

  constructor(
    private readonly table: MetaTable,
    /** Insights' usage by day: a commit marks the days it changes. */
    private readonly usage: UsageDayItems,
    /** A deleted session's shares are revoked in the same transaction. */
    private readonly shares: DynamoShareStore,
    private readonly commitItems?: CommitItems,
    /** How a commit's conflict or a delete reads the head again (default: {@link getHead}). */
    readHead?: HeadReader,
  ) {
    this.readHead = readHead ?? ((userId, sessionId) => this.getHead(userId, sessionId));
  }

  /** A Scan of the heads' keys (the whole table is read: for passes over the whole store, not requests). */
  async users(): Promise<string[]> {
    const users = new Set<string>();
    let start: Item | undefined;
    do {
      const page = await this.table.client.send(
        new ScanCommand({
          TableName: this.table.name,
          FilterExpression: "begins_with(pk, :user) AND begins_with(sk, :session)",
          ExpressionAttributeValues: { ":user": "U#", ":session": "S#" },
          ProjectionExpression: "pk",
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) users.add(String(item.pk).slice(2));
      start = page.LastEvaluatedKey;
    } while (start);
    return [...users];
  }

  async getHead(userId: string, sessionId: string): Promise<SessionHead | undefined> {
    const stored = await this.table.getItem(headKey(userId, sessionId), true);
    return stored ? dataOf<SessionHead>(stored) : undefined;
  }

  async commit(commit: Commit): Promise<void> {
    const { head } = commit;
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.table.name,
          Item: {
            ...headKey(head.userId, head.sessionId),
            gsi1pk: `U#${head.userId}`,
            gsi1sk: `${head.updatedAt}#${head.sessionId}`,
            revision: head.revision,
            data: JSON.stringify(head),
            card: JSON.stringify(cardOf(head)),
          },
          ...(commit.expectedRevision === null
            ? { ConditionExpression: "attribute_not_exists(pk)" }
            : {
                ConditionExpression: "revision = :expected",
                ExpressionAttributeValues: { ":expected": commit.expectedRevision },
              }),
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
      // Its list entry: the head's condition guards the whole transaction.
      { Put: { TableName: this.table.name, Item: listItem(head.userId, cardOf(head)) } },
    ];
    const pk = sessionPk(head.userId, head.sessionId);
    for (const page of commit.pages ?? []) {
      items.push({
        Put: {
          TableName: this.table.name,
          Item: {
            pk,
            sk: `G#${hex(page.generation, 8)}#${hex(page.start, 16)}`,
            gz: gzipSync(JSON.stringify(page)),
          },
          // Not conditional: a page at the same start can only be left by a head that went back
          // (its commit's record lost), and the commit that writes those bytes again replaces it.
        },
      });
    }
    if (commit.archive) {
      items.push({
        Put: {
          TableName: this.table.name,
          Item: { pk, sk: `A#${hex(commit.archive.generation, 8)}`, data: JSON.stringify(commit.archive) },
        },
      });
    }
    for (const Item of this.commitItems?.(commit) ?? []) items.push({ Put: { TableName: this.table.name, Item } });
    // The days whose usage it changes, marked in the same transaction: written just after, or
    // by the next report when this process stops before that.
    const days = commit.usageDays ?? [...dayUsagesOf(head.summary).keys()];
    if (days.length > 0) items.push(this.usage.markItem(head.userId, head.sessionId, head.revision, days));
    // Its filter entries, moved with it in the same transaction while they fit DynamoDB's 100
    // items; the rest (a card of many models beside a body of many pages) are put just after.
    const filters = filterItems(head.userId, cardOf(head));
    const room = Math.max(0, TRANSACTION_ITEMS - items.length);
    for (const Item of filters.slice(0, room)) items.push({ Put: { TableName: this.table.name, Item } });
    try {
      // The same token on every sending of this commit: DynamoDB applies it once (for 10 minutes).
      await this.table.client.send(
        new TransactWriteCommand({ TransactItems: items, ClientRequestToken: commit.token }),
      );
    } catch (error) {
      if (error instanceof TransactionCanceledException) {
        const reasons = error.CancellationReasons;
        const reason = reasons?.[0];
        if (reasons?.some((r) => r.Code === "ThrottlingError" || r.Code === "ProvisionedThroughputExceeded")) {
          throw new StorageUnavailableError("DynamoDB throttled the commit", { cause: error });
        }
        // Another transaction on the head at the same moment lost us the race just the same.
        if (reasons?.some((r) => r.Code === "TransactionConflict")) {
          throw new RevisionConflictError(await this.readHead(head.userId, head.sessionId));
        }
        if (reason?.Code === "ConditionalCheckFailed") {
          // The reasons are not unmarshalled by the document client: `data` is still `{ S: "..." }`.
          const data = reason.Item?.data?.S;
          const stored = data ? (JSON.parse(data) as SessionHead) : await this.readHead(head.userId, head.sessionId);
          throw new RevisionConflictError(stored);
        }
      }
      throw error;
    }
    if (days.length > 0) {
      // The commit stands either way: its mark stays for the next report when this fails.
      await this.usage.settle(head.userId, head.sessionId, { head, revision: head.revision, days }).catch(() => {});
    }
    if (filters.length > room) {
      // The commit stands either way: a filter entry not written now is written by
      // `verify --repair`, and a filtered page never shows a stale one (its time is checked).
      await this.table
        .writeBatch(
          filters.slice(room).map((Item) => ({ PutRequest: { Item } })),
          `put the filter entries of session ${head.sessionId}`,
        )
        .catch(() => {});
    }
  }

  async listHeads(userId: string, options: { limit: number; cursor?: string }) {
    const gsi1pk = `U#${userId}`;
    const result = await this.table.query({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": gsi1pk },
      ScanIndexForward: false,
      Limit: options.limit,
      ExclusiveStartKey: decodeCursor(options.cursor, gsi1pk),
    });
    const heads = (result.Items ?? []).map((stored) => dataOf<SessionHead>(stored));
    return result.LastEvaluatedKey
      ? { heads, cursor: Buffer.from(JSON.stringify(result.LastEvaluatedKey)).toString("base64url") }
      : { heads };
  }

  async getPages(userId: string, sessionId: string, generation: number, from = 0): Promise<IndexPage[]> {
    // Fixed-width hex keeps sort keys in byte order: one range query, from `from` to the generation's end.
    const items = await this.table.queryAll({
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
      ExpressionAttributeValues: {
        ":pk": sessionPk(userId, sessionId),
        ":from": `G#${hex(generation, 8)}#${hex(from, 16)}`,
        ":to": `G#${hex(generation, 8)}#~`,
      },
      ConsistentRead: true,
    });
    return items.map((stored) => JSON.parse(gunzipSync(stored.gz as Uint8Array).toString("utf8")) as IndexPage);
  }

  async getArchived(userId: string, sessionId: string): Promise<GenerationState[]> {
    const items = await this.table.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": sessionPk(userId, sessionId), ":prefix": "A#" },
      ConsistentRead: true,
    });
    return items.map((stored) => dataOf<GenerationState>(stored));
  }

  async deleteSession(userId: string, sessionId: string, revokedAt: string): Promise<void> {
    // The head's removal and the revocation of the session's shares are one transaction (up to
    // 100 items; a user with more live shares of one session has the rest revoked just before).
    const revoked = (await this.shares.listShares(userId))
      .filter((share) => share.sessionId === sessionId && !share.revokedAt)
      .map((share) => ({ Update: { TableName: this.table.name, ...shareUpdate({ ...share, revokedAt }) } }));
    // Room is left for the head, its list entry and its usage mark.
    const early = revoked.slice(0, Math.max(0, revoked.length - (TRANSACTION_ITEMS - 3)));
    for (let i = 0; i < early.length; i += 100) {
      await this.table.client.send(new TransactWriteCommand({ TransactItems: early.slice(i, i + 100) }));
    }
    let days: string[];
    for (let attempt = 1; ; attempt++) {
      const head = await this.readHead(userId, sessionId);
      days = [...dayUsagesOf(head?.summary).keys()];
      // The head as read, so that its mark names every day it has: an append committed meanwhile
      // is read again (the last try deletes whatever is there, as a delete always wins).
      const guard =
        head && attempt < DELETE_TRIES
          ? { ConditionExpression: "revision = :r", ExpressionAttributeValues: { ":r": head.revision } }
          : {};
      const commitHead: TransactItem[] = [
        { Delete: { TableName: this.table.name, Key: headKey(userId, sessionId), ...guard } },
        { Delete: { TableName: this.table.name, Key: listKey(userId, sessionId) } },
        // Its usage by day leaves with it (the mark is settled just below, or by the next report).
        ...(days.length > 0 ? [this.usage.markItem(userId, sessionId, (head?.revision ?? 0) + 1, days)] : []),
      ];
      try {
        await this.table.client.send(
          new TransactWriteCommand({ TransactItems: [...commitHead, ...revoked.slice(early.length)] }),
        );
        break;
      } catch (error) {
        const moved =
          error instanceof TransactionCanceledException &&
          error.CancellationReasons?.[0]?.Code === "ConditionalCheckFailed";
        if (!moved) throw error;
      }
    }
    // Then the pages and archives, which nothing reaches without the head, and the filter
    // entries (a read drops one whose list entry is gone).
    const keys = await this.table.queryAll({
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": sessionPk(userId, sessionId) },
      ProjectionExpression: "pk, sk",
    });
    const filters = await this.table.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `U#${userId}`, ":prefix": filterSkPrefix(sessionId) },
      ProjectionExpression: "pk, sk",
    });
    await this.table.deleteKeys([...keys, ...filters], `of session ${sessionId}`);
    if (days.length > 0) await this.usage.settle(userId, sessionId).catch(() => {});
  }

  async serverId(candidate: string): Promise<string> {
    // One item, written once: the first writer's id stands (a conditional put).
    const Key = key("SERVER", "ID");
    const stored = await this.table.getItem(Key, true);
    if (stored) return String(stored.data);
    try {
      await this.table.client.send(
        new PutCommand({
          TableName: this.table.name,
          Item: { ...Key, data: candidate },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return candidate;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return String((await this.table.getItem(Key, true))?.data);
    }
  }
}
