/**
 * The library's cards on the metadata table (see {@link CardStore}): the list entries and filter
 * entries each commit writes beside the head (items in `dynamo-meta-store.ts`), read a page at a
 * time in the list's order; a head written before they were kept has its card made from the head.
 */
import { createHash } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { cardOf } from "../card.js";
import {
  type CardBatchReader,
  filterIndexOf,
  filterKeys,
  type ListPosition,
  lastAtRange,
  listedCard,
  modelKeys,
  readCardPage,
} from "../listing.js";
import type { CardFilter, CardPage, CardPageRequest, CardStore, SessionCard } from "../ports-cards.js";
import type { SessionHead } from "../ports-sessions.js";
import { GSI, type Item, key, type MetaTable } from "./meta-table.js";
import type { UsageDayItems } from "./usage-day-items.js";

/** Reads a session's head (the composed store's, so that a read of it is one place). */
export type HeadReader = (userId: string, sessionId: string) => Promise<SessionHead | undefined>;

export const listKey = (userId: string, sessionId: string) => key(`U#${userId}`, `C#${sessionId}`);
const listPk = (userId: string) => `UL#${userId}`;
/**
 * A session's entry in the library's list (see the items above), with its folder (`cwd`) and
 * the model names it answers to (`mk`, a string set) apart, for the list's filter expression.
 */
export function listItem(userId: string, card: SessionCard): Item {
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
export const filterSkPrefix = (sessionId: string) => `K#${sessionId}#`;
const filterPk = (userId: string, key: string) => `UK#${userId}#${keyHash(key)}`;

/**
 * The filter entries of a session's card (see the items above): ordered like the list, with the
 * folder and model names of the list entry, so a page with a second filter narrows on them too.
 */
export function filterItems(userId: string, card: SessionCard): Item[] {
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

/** The cards port on the metadata table. */
export class DynamoCardStore implements CardStore {
  /** Items the list queries have read (their `ScannedCount`), for tests and benchmarks. */
  readonly listReads = { items: 0, queries: 0, fetched: 0 };

  constructor(
    private readonly table: MetaTable,
    /** Insights' usage by day, filed by a repair of the list (see `fillCardList`). */
    private readonly usage: UsageDayItems,
    private readonly readHead: HeadReader,
  ) {}

  async listCards(userId: string): Promise<SessionCard[]> {
    const items = await this.table.queryAll({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": `U#${userId}` },
      ProjectionExpression: "sk, card",
    });
    // A head written before cards were kept has none: its card is made from the head.
    const cards = await Promise.all(
      items.map(async (item) => {
        if (typeof item.card === "string") return JSON.parse(item.card) as SessionCard;
        const head = await this.readHead(userId, String(item.sk).slice(2));
        return head ? cardOf(head) : undefined;
      }),
    );
    return cards.filter((card) => card !== undefined);
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
    const result = await this.table.query({
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
      const listed = await this.table.batchGet(
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

  async getCards(userId: string, sessionIds: readonly string[]): Promise<SessionCard[]> {
    const ids = [...new Set(sessionIds)];
    const listed = await this.table.batchGet(
      ids.map((id) => listKey(userId, id)),
      "card",
    );
    const cards = listed.map((item) => JSON.parse(item.card as string) as SessionCard);
    // A session not in the list yet (written before it was kept): its card from the head.
    const found = new Set(cards.map((card) => card.sessionId));
    for (const id of ids.filter((id) => !found.has(id))) {
      const head = await this.readHead(userId, id);
      if (head) cards.push(listedCard(cardOf(head)));
    }
    return cards;
  }

  async fillCardList(userId: string, options: { check?: boolean } = {}): Promise<number> {
    const listed = await this.table.queryAll({
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
        await this.table.client.send(
          new PutCommand({
            TableName: this.table.name,
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
    const stored = await this.table.queryAll({
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
    await this.table.deleteKeys(stale, `of ${userId}'s stale filter entries`);
    for (const Item of lacking) {
      try {
        await this.table.client.send(
          new PutCommand({ TableName: this.table.name, Item, ConditionExpression: "attribute_not_exists(pk)" }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    return sessions.size;
  }
}
