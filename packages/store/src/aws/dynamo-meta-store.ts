/**
 * Session metadata in one DynamoDB table. A commit is one TransactWriteItems: the head put,
 * conditional on its revision, with the new index pages and any archived generation; all or
 * nothing. A failed condition comes back with the stored head (ReturnValuesOnConditionCheckFailure),
 * so a conflict costs no second read.
 *
 * Items (user and session ids are validated to [A-Za-z0-9._-], so `#` separates safely):
 * - head:    pk `U#<user>`, sk `S#<session>`; gsi1 `U#<user>` / `<updatedAt>#<session>`; `card`, the
 *            library's small view of it (JSON), read alone when a whole list is wanted
 * - list entry: pk `U#<user>`, sk `C#<session>`; gsi1 `UL#<user>` / `<lastAt>#<session>`; `card`
 *            without its usage, `cwd` and `mk` (the model names it answers to) for the filters:
 *            the library's list read a page at a time in its order, written (and deleted) in the
 *            same transaction as the head
 * - filter entry: pk `U#<user>`, sk `K#<session>#<key hash>`; gsi1 `UK#<user>#<key hash>` /
 *            `<lastAt>#<session>`: one per filter key of the session's card (`filterKeys`: its
 *            folder and the folders above it, its model names), no body, so a folder or model
 *            filter reads a page of its own index in the list's order, then those sessions'
 *            list entries (`BatchGetItem`); written in the same transaction as the head. One
 *            whose key the card no longer has is left stale (its `lastAt` old): a read drops it,
 *            as the list entry it names no longer matches; `verify --repair` removes it
 * - page:    pk `P#<user>#<session>`, sk `G#<generation:8 hex>#<start:16 hex>`
 * - archive: pk `P#<user>#<session>`, sk `A#<generation:8 hex>`
 * - token:   pk `T#<hash>`, sk `T`; gsi1 `UT#<user>` / `<token id>`
 * - share:   pk `H#<id>`, sk `H`; gsi1 `UH#<user>` / `<createdAt>#<id>`; TTL a month after expiry;
 *            `views` (a number, `ADD`ed atomically) and `lastViewedAt` beside `data`, which
 *            writes of the record never touch
 * - sign-in link:    pk `L#<hash>`, sk `L`; TTL a day after its expiry (redeeming marks it `redeemedBy`)
 * - device code:     pk `D#<user code>`, sk `D`; `status` and `until` (its expiry, epoch seconds) beside
 *                    `data` for the conditions; TTL a day after its expiry
 * - browser session: pk `B#<hash>`, sk `B`; gsi1 `UB#<user>` / `<createdAt>#<id>`; TTL 31 days after last use
 * A token's or browser session's last use is its own attribute `lastUsedAt` (one small update,
 * conditional on the item existing, so a touch never brings a revoked one back).
 * Bodies are JSON strings in `data`: items stay small (content lives in S3). Page bodies are
 * gzip-compressed JSON in `gz` (binary): a fifth of the size, so fewer write units and a tree
 * read in fewer, smaller queries.
 */

import { createHash, randomUUID } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { ConditionalCheckFailedException, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  BatchWriteCommand,
  type BatchWriteCommandInput,
  type BatchWriteCommandOutput,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { cardOf } from "../card.js";
import { RevisionConflictError, StorageUnavailableError } from "../errors.js";
import { TABLE_SCHEMA } from "../layout.js";
import {
  type CardBatchReader,
  type CardFilter,
  type CardPage,
  type CardPageRequest,
  decodeListCursor,
  encodeListCursor,
  filterIndexOf,
  filterKeys,
  type ListPosition,
  lastAtRange,
  listedCard,
  modelKeys,
  readCardPage,
} from "../listing.js";
import type {
  BrowserSessionRecord,
  Commit,
  DeviceCodeRecord,
  DeviceCodeStatus,
  GenerationState,
  IndexPage,
  LoginLinkRecord,
  MetaStore,
  SessionCard,
  SessionHead,
  ShareRecord,
  TokenRecord,
} from "../ports.js";
import { dayUsagesOf, type UsageInRange } from "../usage-days.js";
import { type AwsConnection, documentClient, queryAll, untilProcessed } from "./client.js";
import { UsageDayItems } from "./usage-day-items.js";

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const sessionPk = (userId: string, sessionId: string) => `P#${userId}#${sessionId}`;
const MONTH_SECONDS = 30 * 24 * 3600;
const GSI = TABLE_SCHEMA.index.name;

/** An item as the document client gives it: plain strings, numbers and bytes. */
type Item = Record<string, unknown>;

const key = (pk: string, sk: string) => ({ pk, sk });
const headKey = (userId: string, sessionId: string) => key(`U#${userId}`, `S#${sessionId}`);
const listKey = (userId: string, sessionId: string) => key(`U#${userId}`, `C#${sessionId}`);
const listPk = (userId: string) => `UL#${userId}`;
/**
 * A session's entry in the library's list (see the items above), with its folder (`cwd`) and
 * the model names it answers to (`mk`, a string set) apart, for the list's filter expression.
 */
function listItem(userId: string, card: SessionCard): Item {
  const models = modelKeys(card);
  return {
    ...listKey(userId, card.sessionId),
    gsi1pk: listPk(userId),
    gsi1sk: `${card.lastAt}#${card.sessionId}`,
    card: JSON.stringify(listedCard(card)),
    ...(card.cwd ? { cwd: card.cwd } : {}),
    // A set cannot be empty: a card without models has none.
    ...(models.length ? { mk: new Set(models) } : {}),
  };
}

/** A filter key as a key part: hashed, so any folder or model name (any length, any character) fits. */
const keyHash = (key: string) => createHash("sha256").update(key).digest("base64url").slice(0, 22);
const filterSkPrefix = (sessionId: string) => `K#${sessionId}#`;
const filterPk = (userId: string, key: string) => `UK#${userId}#${keyHash(key)}`;

/**
 * The filter entries of a session's card (see the items above): ordered like the list, with the
 * folder and model names of the list entry, so a page with a second filter narrows on them too.
 */
function filterItems(userId: string, card: SessionCard): Item[] {
  const { cwd, mk } = listItem(userId, card);
  return filterKeys(card).map((filterKey) => ({
    pk: `U#${userId}`,
    sk: `${filterSkPrefix(card.sessionId)}${keyHash(filterKey)}`,
    gsi1pk: filterPk(userId, filterKey),
    gsi1sk: `${card.lastAt}#${card.sessionId}`,
    ...(cwd ? { cwd } : {}),
    ...(mk ? { mk } : {}),
  }));
}

/**
 * The folder and model filters as a DynamoDB filter expression: the items read are the same,
 * but only matches come back (a page that skips many costs its matches, not its reads).
 * `cardMatches` still checks each card: the expression only narrows.
 */
function filterExpression(filter: CardFilter | undefined) {
  const parts: string[] = [];
  const values: Record<string, string> = {};
  if (filter?.cwd) {
    parts.push("(cwd = :cwd OR begins_with(cwd, :folder))");
    values[":cwd"] = filter.cwd;
    values[":folder"] = `${filter.cwd.replace(/\/+$/, "")}/`;
  }
  if (filter?.model) {
    parts.push("contains(mk, :model)");
    values[":model"] = filter.model;
  }
  return parts.length ? { FilterExpression: parts.join(" AND "), values } : { values };
}

/** The place in the list a `LastEvaluatedKey` of the list's index names. */
function positionOf(key: Item | undefined): ListPosition | undefined {
  const sk = key?.gsi1sk;
  if (typeof sk !== "string") return undefined;
  const at = sk.lastIndexOf("#");
  return [sk.slice(0, at), sk.slice(at + 1)];
}
/** The JSON body of an item (`data`). */
const dataOf = <T>(stored: Item): T => JSON.parse(stored.data as string) as T;
/** The JSON body of a token or browser session item, with its last use (kept beside it). */
const usedDataOf = <T>(stored: Item): T =>
  typeof stored.lastUsedAt === "string" ? { ...dataOf<T>(stored), lastUsedAt: stored.lastUsedAt } : dataOf<T>(stored);
const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);
const DAY_SECONDS = 24 * 3600;
/** A browser session unused this long is gone for DynamoDB's TTL too (the core refuses it after 30 days). */
const BROWSER_SESSION_TTL_SECONDS = 31 * DAY_SECONDS;

type QueryInput = Omit<QueryCommandInput, "TableName">;
type WriteRequest = NonNullable<BatchWriteCommandInput["RequestItems"]>[string][number];

/** Items one TransactWriteItems may hold. */
const TRANSACTION_ITEMS = 100;
/** Reads of a head a delete makes while appends move it (see `deleteSession`). */
const DELETE_TRIES = 4;
/** Tries of a share's counter whose transaction met another on the same link. */
const COUNT_ATTEMPTS = 4;
type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

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

/** The metadata port on one DynamoDB table of `TABLE_SCHEMA` (see {@link MetaStore} for the contract). */
export class DynamoMetaStore implements MetaStore {
  private readonly client: DynamoDBDocumentClient;
  /** Items the list queries have read (their `ScannedCount`), for tests and benchmarks. */
  readonly listReads = { items: 0, queries: 0, fetched: 0 };
  /** Day items insights' reports have read. */
  readonly usageReads = { items: 0 };

  constructor(
    connection: AwsConnection,
    private readonly table: string,
    private readonly commitItems?: CommitItems,
  ) {
    this.client = documentClient(connection);
    this.usage = new UsageDayItems(
      this.client,
      table,
      (userId, sessionId) => this.getHead(userId, sessionId),
      this.usageReads,
    );
  }

  /** Insights' usage by day (see `usage-day-items.ts`). */
  private readonly usage: UsageDayItems;

  private async getItem(Key: Item, ConsistentRead = false): Promise<Item | undefined> {
    const result = await this.client.send(new GetCommand({ TableName: this.table, Key, ConsistentRead }));
    return result.Item;
  }

  private query(input: QueryInput) {
    return this.client.send(new QueryCommand({ TableName: this.table, ...input }));
  }

  private queryAll(input: QueryInput): Promise<Item[]> {
    return queryAll(this.client, { TableName: this.table, ...input });
  }

  /** A Scan of the heads' keys (the whole table is read: for passes over the whole store, not requests). */
  async users(): Promise<string[]> {
    const users = new Set<string>();
    let start: Item | undefined;
    do {
      const page = await this.client.send(
        new ScanCommand({
          TableName: this.table,
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
    const stored = await this.getItem(headKey(userId, sessionId), true);
    return stored ? dataOf<SessionHead>(stored) : undefined;
  }

  async commit(commit: Commit): Promise<void> {
    const { head } = commit;
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.table,
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
      { Put: { TableName: this.table, Item: listItem(head.userId, cardOf(head)) } },
    ];
    const pk = sessionPk(head.userId, head.sessionId);
    for (const page of commit.pages ?? []) {
      items.push({
        Put: {
          TableName: this.table,
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
          TableName: this.table,
          Item: { pk, sk: `A#${hex(commit.archive.generation, 8)}`, data: JSON.stringify(commit.archive) },
        },
      });
    }
    for (const Item of this.commitItems?.(commit) ?? []) items.push({ Put: { TableName: this.table, Item } });
    // The days whose usage it changes, marked in the same transaction: written just after, or
    // by the next report when this process stops before that.
    const days = commit.usageDays ?? [...dayUsagesOf(head.summary).keys()];
    if (days.length > 0) items.push(this.usage.markItem(head.userId, head.sessionId, head.revision, days));
    // Its filter entries, moved with it in the same transaction while they fit DynamoDB's 100
    // items; the rest (a card of many models beside a body of many pages) are put just after.
    const filters = filterItems(head.userId, cardOf(head));
    const room = Math.max(0, TRANSACTION_ITEMS - items.length);
    for (const Item of filters.slice(0, room)) items.push({ Put: { TableName: this.table, Item } });
    try {
      // The same token on every sending of this commit: DynamoDB applies it once (for 10 minutes).
      await this.client.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: commit.token }));
    } catch (error) {
      if (error instanceof TransactionCanceledException) {
        const reasons = error.CancellationReasons;
        const reason = reasons?.[0];
        if (reasons?.some((r) => r.Code === "ThrottlingError" || r.Code === "ProvisionedThroughputExceeded")) {
          throw new StorageUnavailableError("DynamoDB throttled the commit", { cause: error });
        }
        // Another transaction on the head at the same moment lost us the race just the same.
        if (reasons?.some((r) => r.Code === "TransactionConflict")) {
          throw new RevisionConflictError(await this.getHead(head.userId, head.sessionId));
        }
        if (reason?.Code === "ConditionalCheckFailed") {
          // The reasons are not unmarshalled by the document client: `data` is still `{ S: "..." }`.
          const data = reason.Item?.data?.S;
          const stored = data ? (JSON.parse(data) as SessionHead) : await this.getHead(head.userId, head.sessionId);
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
      await this.writeBatch(
        filters.slice(room).map((Item) => ({ PutRequest: { Item } })),
        `put the filter entries of session ${head.sessionId}`,
      ).catch(() => {});
    }
  }

  async listHeads(userId: string, options: { limit: number; cursor?: string }) {
    const gsi1pk = `U#${userId}`;
    const result = await this.query({
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

  async listCards(userId: string): Promise<SessionCard[]> {
    const items = await this.queryAll({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": `U#${userId}` },
      ProjectionExpression: "sk, card",
    });
    // A head written before cards were kept has none: its card is made from the head.
    const cards = await Promise.all(
      items.map(async (item) => {
        if (typeof item.card === "string") return JSON.parse(item.card) as SessionCard;
        const head = await this.getHead(userId, String(item.sk).slice(2));
        return head ? cardOf(head) : undefined;
      }),
    );
    return cards.filter((card) => card !== undefined);
  }

  listUsage(userId: string, range: { from: string; to: string }): Promise<UsageInRange> {
    return this.usage.read(userId, range);
  }

  listCardPage(userId: string, request: CardPageRequest): Promise<CardPage> {
    const index = filterIndexOf(request.filter);
    if (index) return this.listFilteredPage(userId, request, index);
    const gsi1pk = listPk(userId);
    return readCardPage(userId, request, async (after, count) => {
      const batch = await this.listIndexBatch(
        { gsi1pk, keyOf: (sessionId) => listKey(userId, sessionId), projection: "card" },
        request.filter,
        request.filter,
        after,
        count,
      );
      const cards = batch.items.map((item) => JSON.parse(item.card as string) as SessionCard);
      return { ...batch, cards };
    });
  }

  /**
   * One batch of a list index (`gsi1pk`), newest first, within the filter's dates, after a
   * place, at most `count` items read (DynamoDB narrowing them by `narrow`'s folder and model).
   */
  private async listIndexBatch(
    index: { gsi1pk: string; keyOf: (sessionId: string) => Item; projection: string },
    range: CardFilter | undefined,
    narrow: CardFilter | undefined,
    after: ListPosition | undefined,
    count: number,
  ): Promise<{ items: Item[]; scanned: number; last?: ListPosition; end: boolean }> {
    const { low, high } = lastAtRange(range);
    const filter = filterExpression(narrow);
    let start: Item | undefined;
    if (after) {
      const at = `${after[0]}#${after[1]}`;
      if (at < low) return { items: [], scanned: 0, end: true };
      // A place above the range (a cursor of another filter) starts at the range's top.
      if (at < high) start = { ...index.keyOf(after[1]), gsi1pk: index.gsi1pk, gsi1sk: at };
    }
    const result = await this.query({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk AND gsi1sk BETWEEN :low AND :high",
      ...(filter.FilterExpression ? { FilterExpression: filter.FilterExpression } : {}),
      ExpressionAttributeValues: { ":pk": index.gsi1pk, ":low": low, ":high": high, ...filter.values },
      ProjectionExpression: index.projection,
      ScanIndexForward: false,
      Limit: count,
      ExclusiveStartKey: start,
    });
    const scanned = result.ScannedCount ?? 0;
    this.listReads.items += scanned;
    this.listReads.queries++;
    const last = positionOf(result.LastEvaluatedKey);
    return { items: result.Items ?? [], scanned, ...(last ? { last } : {}), end: !result.LastEvaluatedKey };
  }

  /**
   * A folder- or model-filtered page read through that key's filter entries, in the list's
   * order, then the list entries they name (one `BatchGetItem`): a stale entry (its session
   * moved, or its card lost the key) is dropped by its `lastAt` and the filter's own check.
   */
  private listFilteredPage(
    userId: string,
    request: CardPageRequest,
    index: { key: string; whole: boolean },
  ): Promise<CardPage> {
    const entries = {
      gsi1pk: filterPk(userId, index.key),
      keyOf: (sessionId: string) => ({ pk: `U#${userId}`, sk: `${filterSkPrefix(sessionId)}${keyHash(index.key)}` }),
      projection: "gsi1sk",
    };
    const read: CardBatchReader = async (after, count) => {
      // The index answers the filter whole, or DynamoDB narrows what it read by the rest of it.
      const batch = await this.listIndexBatch(
        entries,
        request.filter,
        index.whole ? undefined : request.filter,
        after,
        count,
      );
      const positions = batch.items.map((item) => positionOf(item) as ListPosition);
      const listed = await this.batchGet(
        positions.map(([, id]) => listKey(userId, id)),
        "card",
      );
      this.listReads.fetched += listed.length;
      const byId = new Map(
        listed.map((item) => {
          const card = JSON.parse(item.card as string) as SessionCard;
          return [card.sessionId, card];
        }),
      );
      const cards = positions.flatMap(([lastAt, id]) => {
        const card = byId.get(id);
        return card && card.lastAt === lastAt ? [card] : [];
      });
      const last = batch.last ?? positions[positions.length - 1];
      return { cards, scanned: batch.scanned, ...(last ? { last } : {}), end: batch.end };
    };
    return readCardPage(userId, request, read, { indexed: index.whole });
  }

  /** Items by key, 100 to a BatchGetItem; unprocessed keys are asked again (see `untilProcessed`). */
  private async batchGet(keys: Item[], ProjectionExpression: string): Promise<Item[]> {
    const items: Item[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      const read = async (pending: Item[]) => {
        const result = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.table]: { Keys: pending, ProjectionExpression } } }),
        );
        items.push(...(result.Responses?.[this.table] ?? []));
        return result.UnprocessedKeys?.[this.table]?.Keys as Item[] | undefined;
      };
      await untilProcessed(keys.slice(i, i + 100), read, "keys unread");
    }
    return items;
  }

  async getCards(userId: string, sessionIds: readonly string[]): Promise<SessionCard[]> {
    const ids = [...new Set(sessionIds)];
    const listed = await this.batchGet(
      ids.map((id) => listKey(userId, id)),
      "card",
    );
    const cards = listed.map((item) => JSON.parse(item.card as string) as SessionCard);
    // A session not in the list yet (written before it was kept): its card from the head.
    const found = new Set(cards.map((card) => card.sessionId));
    for (const id of ids.filter((id) => !found.has(id))) {
      const head = await this.getHead(userId, id);
      if (head) cards.push(listedCard(cardOf(head)));
    }
    return cards;
  }

  async fillCardList(userId: string, options: { check?: boolean } = {}): Promise<number> {
    const listed = await this.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `U#${userId}`, ":prefix": "C#" },
      ProjectionExpression: "sk",
    });
    const have = new Set(listed.map((item) => String(item.sk).slice(2)));
    const cards = await this.listCards(userId);
    const missing = cards.filter((card) => !have.has(card.sessionId));
    const filters = await this.fillFilterEntries(userId, cards, options);
    // And insights' usage by day of those heads (else the user's first report files it).
    if (!options.check) await this.usage.fillUser(userId);
    for (const card of options.check ? [] : missing) {
      try {
        // Only where none is: a commit meanwhile wrote a newer entry, which stays.
        await this.client.send(
          new PutCommand({
            TableName: this.table,
            Item: listItem(userId, card),
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    return missing.length + filters;
  }

  /**
   * Writes the filter entries sessions lack (written before they were kept; only where none is,
   * so a commit meanwhile wins) and removes those whose key the card no longer has (their
   * session gone, or its folder or models changed); with `check` only counts sessions with either.
   */
  private async fillFilterEntries(userId: string, cards: SessionCard[], options: { check?: boolean }) {
    const stored = await this.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `U#${userId}`, ":prefix": "K#" },
      ProjectionExpression: "pk, sk",
    });
    const wanted = new Map(cards.flatMap((card) => filterItems(userId, card).map((item) => [item.sk as string, item])));
    const stale = stored.filter((item) => !wanted.has(item.sk as string));
    const have = new Set(stored.map((item) => item.sk as string));
    const lacking = [...wanted.values()].filter((item) => !have.has(item.sk as string));
    const sessions = new Set(
      [...stale, ...lacking].map((item) => String(item.sk).slice(2, String(item.sk).lastIndexOf("#"))),
    );
    if (options.check) return sessions.size;
    await this.deleteKeys(stale, `of ${userId}'s stale filter entries`);
    for (const Item of lacking) {
      try {
        await this.client.send(
          new PutCommand({ TableName: this.table, Item, ConditionExpression: "attribute_not_exists(pk)" }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    return sessions.size;
  }

  async getPages(userId: string, sessionId: string, generation: number, from = 0): Promise<IndexPage[]> {
    // Fixed-width hex keeps sort keys in byte order: one range query, from `from` to the generation's end.
    const items = await this.queryAll({
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
    const items = await this.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": sessionPk(userId, sessionId), ":prefix": "A#" },
      ConsistentRead: true,
    });
    return items.map((stored) => dataOf<GenerationState>(stored));
  }

  async deleteSession(userId: string, sessionId: string, revokedAt: string): Promise<void> {
    // The head's removal and the revocation of the session's shares are one transaction (up to
    // 100 items; a user with more live shares of one session has the rest revoked just before).
    const revoked = (await this.listShares(userId))
      .filter((share) => share.sessionId === sessionId && !share.revokedAt)
      .map((share) => ({ Update: { TableName: this.table, ...this.shareUpdate({ ...share, revokedAt }) } }));
    // Room is left for the head, its list entry and its usage mark.
    const early = revoked.slice(0, Math.max(0, revoked.length - (TRANSACTION_ITEMS - 3)));
    for (let i = 0; i < early.length; i += 100) {
      await this.client.send(new TransactWriteCommand({ TransactItems: early.slice(i, i + 100) }));
    }
    let days: string[];
    for (let attempt = 1; ; attempt++) {
      const head = await this.getHead(userId, sessionId);
      days = [...dayUsagesOf(head?.summary).keys()];
      // The head as read, so that its mark names every day it has: an append committed meanwhile
      // is read again (the last try deletes whatever is there, as a delete always wins).
      const guard =
        head && attempt < DELETE_TRIES
          ? { ConditionExpression: "revision = :r", ExpressionAttributeValues: { ":r": head.revision } }
          : {};
      const commitHead: TransactItem[] = [
        { Delete: { TableName: this.table, Key: headKey(userId, sessionId), ...guard } },
        { Delete: { TableName: this.table, Key: listKey(userId, sessionId) } },
        // Its usage by day leaves with it (the mark is settled just below, or by the next report).
        ...(days.length > 0 ? [this.usage.markItem(userId, sessionId, (head?.revision ?? 0) + 1, days)] : []),
      ];
      try {
        await this.client.send(
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
    const keys = await this.queryAll({
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": sessionPk(userId, sessionId) },
      ProjectionExpression: "pk, sk",
    });
    const filters = await this.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `U#${userId}`, ":prefix": filterSkPrefix(sessionId) },
      ProjectionExpression: "pk, sk",
    });
    await this.deleteKeys([...keys, ...filters], `of session ${sessionId}`);
    if (days.length > 0) await this.usage.settle(userId, sessionId).catch(() => {});
  }

  /** Deletes items by key. */
  private deleteKeys(keys: Item[], what: string): Promise<void> {
    return this.writeBatch(
      keys.map((Key) => ({ DeleteRequest: { Key } })),
      `delete ${keys.length} items ${what}`,
    );
  }

  /** Writes requests 25 to a BatchWriteItem (its most); unprocessed ones are sent again (see `untilProcessed`). */
  private async writeBatch(all: WriteRequest[], what: string): Promise<void> {
    for (let i = 0; i < all.length; i += 25) {
      const write = async (pending: WriteRequest[]) => {
        const result: BatchWriteCommandOutput = await this.client.send(
          new BatchWriteCommand({ RequestItems: { [this.table]: pending } }),
        );
        return result.UnprocessedItems?.[this.table];
      };
      await untilProcessed(all.slice(i, i + 25), write, `requests to ${what}`);
    }
  }

  /**
   * Creates an item that must not exist yet (its key holds a fresh secret's hash). A retry of a
   * put that was applied but whose answer was lost fails the condition: the item then holds
   * exactly what we wrote, and the put succeeded.
   */
  private async putNew(Item: Item): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({ TableName: this.table, Item, ConditionExpression: "attribute_not_exists(pk)" }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const stored = await this.getItem(key(Item.pk as string, Item.sk as string), true);
      if (stored?.data !== Item.data) throw error;
    }
  }

  async serverId(candidate: string): Promise<string> {
    // One item, written once: the first writer's id stands (a conditional put).
    const Key = key("SERVER", "ID");
    const stored = await this.getItem(Key, true);
    if (stored) return String(stored.data);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...Key, data: candidate },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return candidate;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return String((await this.getItem(Key, true))?.data);
    }
  }

  async putToken(token: TokenRecord): Promise<void> {
    await this.putNew({
      pk: `T#${token.hash}`,
      sk: "T",
      gsi1pk: `UT#${token.userId}`,
      gsi1sk: token.id,
      data: JSON.stringify(token),
    });
  }

  async findToken(hash: string): Promise<TokenRecord | undefined> {
    const stored = await this.getItem(key(`T#${hash}`, "T"));
    return stored ? usedDataOf<TokenRecord>(stored) : undefined;
  }

  /** The items under one `gsi1` partition (a user's tokens, shares, browser sessions). */
  private listIndexedItems(gsi1pk: string, newestFirst = false): Promise<Item[]> {
    return this.queryAll({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": gsi1pk },
      ScanIndexForward: !newestFirst,
    });
  }

  /** The bodies (with their last use) of every item under one `gsi1` partition. */
  private async listIndexed<T>(gsi1pk: string, newestFirst = false): Promise<T[]> {
    return (await this.listIndexedItems(gsi1pk, newestFirst)).map((stored) => usedDataOf<T>(stored));
  }

  /** Sets an item's `lastUsedAt` (and more), only if the item still exists. */
  private async touch(Key: Item, lastUsedAt: string, ttl?: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key,
          UpdateExpression: ttl === undefined ? "SET lastUsedAt = :at" : "SET lastUsedAt = :at, #ttl = :ttl",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: { ":at": lastUsedAt, ...(ttl === undefined ? {} : { ":ttl": ttl }) },
          ...(ttl === undefined ? {} : { ExpressionAttributeNames: { "#ttl": TABLE_SCHEMA.ttlAttribute } }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  listTokens(userId: string): Promise<TokenRecord[]> {
    return this.listIndexed(`UT#${userId}`);
  }

  /**
   * A page of one `gsi1` partition in ascending order, after `after` (a sort key value, read as
   * a key condition: the items' own keys hold secrets' hashes, which a cursor must not carry).
   */
  private async ascendingPage(gsi1pk: string, after: string | undefined, limit: number) {
    const result = await this.query({
      IndexName: GSI,
      KeyConditionExpression: after === undefined ? "gsi1pk = :pk" : "gsi1pk = :pk AND gsi1sk > :after",
      ExpressionAttributeValues: { ":pk": gsi1pk, ...(after === undefined ? {} : { ":after": after }) },
      // One more than the page: whether another page follows.
      Limit: limit + 1,
    });
    const items = result.Items ?? [];
    return { items: items.slice(0, limit), more: items.length > limit || result.LastEvaluatedKey !== undefined };
  }

  async listTokenPage(userId: string, page: { limit: number; cursor?: string }) {
    const after = page.cursor ? decodeListCursor(userId, page.cursor)[1] : undefined;
    const { items, more } = await this.ascendingPage(`UT#${userId}`, after, page.limit);
    const tokens = items.map((stored) => usedDataOf<TokenRecord>(stored));
    const last = tokens[tokens.length - 1];
    return more && last ? { tokens, cursor: encodeListCursor(userId, [last.id, last.id]) } : { tokens };
  }

  async deleteToken(userId: string, id: string): Promise<boolean> {
    const token = (await this.listTokens(userId)).find((t) => t.id === id);
    if (!token) return false;
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: key(`T#${token.hash}`, "T") }));
    return true;
  }

  async renameToken(userId: string, id: string, name: string): Promise<boolean> {
    // The user's index, read at the one id: the item's own key is the secret's hash.
    const found = await this.query({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk AND gsi1sk = :id",
      ExpressionAttributeValues: { ":pk": `UT#${userId}`, ":id": id },
    });
    const stored = found.Items?.[0];
    if (!stored) return false;
    const { lastUsedAt: _kept, ...record } = dataOf<TokenRecord>(stored);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(stored.pk as string, "T"),
          UpdateExpression: "SET #data = :data",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeNames: { "#data": "data" },
          ExpressionAttributeValues: { ":data": JSON.stringify({ ...record, name }) },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false; // revoked meanwhile
      throw error;
    }
  }

  /**
   * A share's item written as an update: by id, listed under its user, kept a month past its
   * expiry; its `views` and `lastViewedAt` are left as they are.
   */
  private shareUpdate(share: ShareRecord) {
    const { views: _views, lastViewedAt: _last, downloads: _downloads, ...record } = share;
    return {
      Key: key(`H#${share.id}`, "H"),
      UpdateExpression: "SET gsi1pk = :gpk, gsi1sk = :gsk, #ttl = :ttl, #data = :data",
      ExpressionAttributeNames: { "#ttl": TABLE_SCHEMA.ttlAttribute, "#data": "data" },
      ExpressionAttributeValues: {
        ":gpk": `UH#${share.userId}`,
        ":gsk": `${share.createdAt}#${share.id}`,
        ":ttl": Math.floor(Date.parse(share.expiresAt) / 1000) + MONTH_SECONDS,
        ":data": JSON.stringify(record),
      },
    };
  }

  /** A share's record from its item, with its view count and last view. */
  private static shareOf(stored: Item): ShareRecord {
    const share = dataOf<ShareRecord>(stored);
    const lastViewedAt = typeof stored.lastViewedAt === "string" ? { lastViewedAt: stored.lastViewedAt } : {};
    return { ...share, views: Number(stored.views ?? 0), downloads: Number(stored.downloads ?? 0), ...lastViewedAt };
  }

  async putShare(share: ShareRecord): Promise<void> {
    await this.client.send(new UpdateCommand({ TableName: this.table, ...this.shareUpdate(share) }));
  }

  async getShare(id: string): Promise<ShareRecord | undefined> {
    const stored = await this.getItem(key(`H#${id}`, "H"), true);
    return stored ? DynamoMetaStore.shareOf(stored) : undefined;
  }

  async listShares(userId: string): Promise<ShareRecord[]> {
    const items = await this.queryAll({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": `UH#${userId}` },
      ScanIndexForward: false,
    });
    return items.map((stored) => DynamoMetaStore.shareOf(stored));
  }

  async listSharePage(userId: string, page: { limit: number; cursor?: string }) {
    const gsi1pk = `UH#${userId}`;
    const after = page.cursor ? decodeListCursor(userId, page.cursor) : undefined;
    const result = await this.query({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": gsi1pk },
      ScanIndexForward: false,
      // One more than the page: whether another page follows.
      Limit: page.limit + 1,
      ExclusiveStartKey: after
        ? { ...key(`H#${after[1]}`, "H"), gsi1pk, gsi1sk: `${after[0]}#${after[1]}` }
        : undefined,
    });
    const shares = (result.Items ?? []).map((stored) => DynamoMetaStore.shareOf(stored));
    if (shares.length <= page.limit) return { shares };
    const last = shares[page.limit - 1];
    return { shares: shares.slice(0, page.limit), cursor: encodeListCursor(userId, [last.createdAt, last.id]) };
  }

  recordShareView(id: string, at: string): Promise<void> {
    return this.countShare(id, "ADD #n :one SET lastViewedAt = :at", "views", { ":at": at });
  }

  recordShareDownload(id: string): Promise<void> {
    return this.countShare(id, "ADD #n :one", "downloads");
  }

  /**
   * One atomic counter update of an existing share (nothing is read first); an unknown id
   * changes nothing. A transaction of one update, for its idempotency token: the SDK sends an
   * attempt whose answer was lost again with the same token, which DynamoDB applies once. Views
   * of one link at the same moment cancel each other's transactions (nothing applied): each
   * is tried again, with a token of its own, a few times.
   */
  private async countShare(id: string, update: string, counter: string, values: Record<string, string> = {}) {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.send(
          new TransactWriteCommand({
            ClientRequestToken: randomUUID(),
            TransactItems: [
              {
                Update: {
                  TableName: this.table,
                  Key: key(`H#${id}`, "H"),
                  UpdateExpression: update,
                  ConditionExpression: "attribute_exists(pk)",
                  ExpressionAttributeNames: { "#n": counter },
                  ExpressionAttributeValues: { ":one": 1, ...values },
                },
              },
            ],
          }),
        );
        return;
      } catch (error) {
        const reason = error instanceof TransactionCanceledException ? error.CancellationReasons?.[0]?.Code : undefined;
        if (reason === "ConditionalCheckFailed") return; // no such share
        if (reason !== "TransactionConflict" || attempt >= COUNT_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    }
  }

  touchToken(hash: string, lastUsedAt: string): Promise<void> {
    return this.touch(key(`T#${hash}`, "T"), lastUsedAt);
  }

  async putLoginLink(link: LoginLinkRecord): Promise<void> {
    await this.putNew({
      ...key(`L#${link.hash}`, "L"),
      [TABLE_SCHEMA.ttlAttribute]: epochSeconds(link.expiresAt) + DAY_SECONDS,
      data: JSON.stringify(link),
    });
  }

  async consumeLoginLink(hash: string): Promise<LoginLinkRecord | undefined> {
    // A conditional update that marks the link redeemed by this call: of two concurrent
    // redemptions one marks it and the other fails the condition, while the SDK's own retry of
    // an applied mark (its answer lost) carries the same mark and meets its own write. The item
    // then lives out its TTL, as a used link.
    const redemption = randomUUID();
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(`L#${hash}`, "L"),
          UpdateExpression: "SET redeemedBy = :r",
          ConditionExpression: "attribute_exists(pk) AND (attribute_not_exists(redeemedBy) OR redeemedBy = :r)",
          ExpressionAttributeValues: { ":r": redemption },
          ReturnValues: "ALL_NEW",
        }),
      );
      return result.Attributes ? dataOf<LoginLinkRecord>(result.Attributes) : undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  private deviceCodeItem(record: DeviceCodeRecord): Item {
    return {
      ...key(`D#${record.userCode}`, "D"),
      status: record.status,
      until: epochSeconds(record.expiresAt),
      [TABLE_SCHEMA.ttlAttribute]: epochSeconds(record.expiresAt) + DAY_SECONDS,
      data: JSON.stringify(record),
    };
  }

  async putDeviceCode(record: DeviceCodeRecord): Promise<boolean> {
    // An expired code that TTL has not removed yet gives its user code away.
    const item = this.deviceCodeItem(record);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: item,
          ConditionExpression: "attribute_not_exists(pk) OR #until <= :now OR #data = :data",
          ExpressionAttributeNames: { "#until": "until", "#data": "data" },
          ExpressionAttributeValues: { ":now": epochSeconds(record.createdAt), ":data": item.data },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async getDeviceCode(userCode: string): Promise<DeviceCodeRecord | undefined> {
    const stored = await this.getItem(key(`D#${userCode}`, "D"), true);
    // A consumed code waits for TTL only: it is gone.
    return stored && stored.consumedBy === undefined ? dataOf<DeviceCodeRecord>(stored) : undefined;
  }

  async updateDeviceCode(record: DeviceCodeRecord, expected: DeviceCodeStatus): Promise<boolean> {
    // A retry of an applied update (its answer lost) meets its own write: the same data counts.
    const item = this.deviceCodeItem(record);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: item,
          ConditionExpression:
            "attribute_exists(pk) AND attribute_not_exists(consumedBy) AND (#status = :expected OR #data = :data)",
          ExpressionAttributeNames: { "#status": "status", "#data": "data" },
          ExpressionAttributeValues: { ":expected": expected, ":data": item.data },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async consumeDeviceCode(userCode: string, expected: DeviceCodeStatus): Promise<DeviceCodeRecord | undefined> {
    // As a sign-in link: the call marks it consumed by itself (a lost answer's retry meets its
    // own mark), so of concurrent calls exactly one gets it; TTL removes the item.
    const consumption = randomUUID();
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(`D#${userCode}`, "D"),
          UpdateExpression: "SET consumedBy = :c",
          ConditionExpression:
            "attribute_exists(pk) AND #status = :expected AND (attribute_not_exists(consumedBy) OR consumedBy = :c)",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: { ":c": consumption, ":expected": expected },
          ReturnValues: "ALL_NEW",
        }),
      );
      return result.Attributes ? dataOf<DeviceCodeRecord>(result.Attributes) : undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  async putBrowserSession(session: BrowserSessionRecord): Promise<void> {
    await this.putNew({
      ...key(`B#${session.hash}`, "B"),
      gsi1pk: `UB#${session.userId}`,
      gsi1sk: `${session.createdAt}#${session.id}`,
      [TABLE_SCHEMA.ttlAttribute]: epochSeconds(session.lastUsedAt) + BROWSER_SESSION_TTL_SECONDS,
      data: JSON.stringify(session),
    });
  }

  async findBrowserSession(hash: string): Promise<BrowserSessionRecord | undefined> {
    const stored = await this.getItem(key(`B#${hash}`, "B"), true);
    return stored ? usedDataOf<BrowserSessionRecord>(stored) : undefined;
  }

  listBrowserSessions(userId: string): Promise<BrowserSessionRecord[]> {
    return this.listIndexed(`UB#${userId}`);
  }

  async listBrowserSessionPage(userId: string, page: { limit: number; cursor?: string }) {
    const at = page.cursor ? decodeListCursor(userId, page.cursor) : undefined;
    const { items, more } = await this.ascendingPage(`UB#${userId}`, at && `${at[0]}#${at[1]}`, page.limit);
    const sessions = items.map((stored) => usedDataOf<BrowserSessionRecord>(stored));
    const last = sessions[sessions.length - 1];
    return more && last ? { sessions, cursor: encodeListCursor(userId, [last.createdAt, last.id]) } : { sessions };
  }

  touchBrowserSession(hash: string, lastUsedAt: string): Promise<void> {
    return this.touch(key(`B#${hash}`, "B"), lastUsedAt, epochSeconds(lastUsedAt) + BROWSER_SESSION_TTL_SECONDS);
  }

  async deleteBrowserSession(userId: string, id: string): Promise<boolean> {
    const session = (await this.listBrowserSessions(userId)).find((s) => s.id === id);
    if (!session) return false;
    // Unconditional: the session was this user's when listed, and a delete the SDK sends again
    // after its answer was lost must not turn a sign-out into "no such session".
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: key(`B#${session.hash}`, "B") }));
    return true;
  }

  async deleteBrowserSessions(userId: string): Promise<number> {
    const keys = (await this.listIndexedItems(`UB#${userId}`)).map((item) => key(item.pk as string, item.sk as string));
    await this.deleteKeys(keys, `of ${userId}'s browser sessions`);
    return keys.length;
  }
}
