/**
 * The library's paged list of a user's session cards, the same on every adapter: ordered
 * latest conversation first (`lastAt`, then session id, both descending), read from an index
 * on that order a batch at a time. The date range narrows what the index reads; the folder and
 * model filters cannot be index keys (a folder matches its subfolders, a model its short name),
 * so each page scans ahead at most {@link LIST_SCAN_BUDGET} cards and, when the page is not full
 * by then, stops with a cursor that resumes where the scan stopped. No request reads more.
 */
import { InvalidCursorError } from "./errors.js";
import type { CardFilter, CardPage, CardPageRequest, SessionCard } from "./ports-cards.js";

export type { CardFilter, CardPage, CardPageRequest };

/**
 * The most cards one page request reads from the index: a filter that matches little returns a
 * short (even empty) page with a cursor, never a read of the whole list.
 */
export const LIST_SCAN_BUDGET = 1000;

/** A place in the list: the `lastAt` and session id of the last card read. */
export type ListPosition = [lastAt: string, sessionId: string];

/** The highest code point: a bound above every string that starts with a given day. */
const TOP = "\u{10FFFF}";

/**
 * The `lastAt` range a filter's dates allow, both bounds inclusive (a space is below every
 * timestamp, and never empty: DynamoDB refuses an empty key value).
 */
export function lastAtRange(filter: CardFilter | undefined): { low: string; high: string } {
  return { low: filter?.from || " ", high: filter?.to ? `${filter.to}${TOP}` : TOP };
}

/** Whether a card passes a filter. */
export function cardMatches(card: SessionCard, filter: CardFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.cwd) {
    const cwd = card.cwd ?? "";
    const folder = filter.cwd.replace(/\/+$/, "");
    if (cwd !== filter.cwd && !cwd.startsWith(`${folder}/`)) return false;
  }
  if (filter.model && !card.models.some((m) => m === filter.model || m.endsWith(`/${filter.model}`))) return false;
  const day = card.lastAt.slice(0, 10);
  if (filter.from && day < filter.from) return false;
  if (filter.to && day > filter.to) return false;
  return true;
}

/** Whether a filter narrows anything. */
const narrows = (filter: CardFilter | undefined) =>
  filter !== undefined && Object.values(filter).some((value) => value !== undefined && value !== "");

/** A card as the list keeps it: without its usage rollup (insights read that from the head). */
export function listedCard(card: SessionCard): SessionCard {
  const { usage: _usage, ...listed } = card;
  return listed;
}

/** A cursor names its user: one from another user's list is refused, never read. */
export function encodeListCursor(userId: string, position: ListPosition): string {
  return Buffer.from(JSON.stringify([1, userId, ...position])).toString("base64url");
}

/** The position a cursor names. @throws InvalidCursorError for one this user's list did not give */
export function decodeListCursor(userId: string, cursor: string): ListPosition {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new InvalidCursorError();
  }
  if (
    !Array.isArray(value) ||
    value.length !== 4 ||
    value[0] !== 1 ||
    value[1] !== userId ||
    typeof value[2] !== "string" ||
    typeof value[3] !== "string"
  ) {
    throw new InvalidCursorError();
  }
  return [value[2], value[3]];
}

/**
 * Reads cards after `after` (strictly older in list order) within the filter's `lastAt` range,
 * looking at most `count` of them, in list order. An adapter may leave out cards that do not
 * match (a filter applied where they are stored); it says how many it looked at (`scanned`),
 * where it stopped (`last`), and `end` when the range has no more.
 */
export type CardBatchReader = (
  after: ListPosition | undefined,
  count: number,
) => Promise<{ cards: SessionCard[]; scanned: number; last?: ListPosition; end: boolean }>;

/** The model names a card answers to: each model, and each part of it after a `/` (see {@link cardMatches}). */
export function modelKeys(card: SessionCard): string[] {
  const keys = new Set<string>();
  for (const model of card.models) {
    keys.add(model);
    for (let at = model.indexOf("/"); at >= 0; at = model.indexOf("/", at + 1)) keys.add(model.slice(at + 1));
  }
  return [...keys];
}

/**
 * Folder levels a card is indexed under: its folder's ancestors of at most this many `/` (and
 * its folder itself when no deeper). A filter on a deeper folder reads its ancestor's index at
 * that depth and checks each card (within {@link LIST_SCAN_BUDGET}).
 */
export const FOLDER_KEY_DEPTH = 6;
/**
 * Trailing parts of a model name a card is also indexed under (besides the whole name): a
 * filter of at most this many parts reads its index; a longer one scans, as before.
 */
export const MODEL_KEY_PARTS = 2;

const slashes = (text: string) => text.split("/").length - 1;

/**
 * The filter keys a card is listed under (`f:` folders, `m:` model names): every folder and
 * model filter a card passes names one of them (see {@link filterIndexOf}), so a filtered page
 * reads an index of its key, ordered like the list, instead of scanning the list.
 * At most 8 folder keys and 3 per model (20 models at most): a commit writes a bounded number.
 */
export function filterKeys(card: SessionCard): string[] {
  const keys = new Set<string>();
  const cwd = card.cwd;
  if (cwd !== undefined && cwd !== "") {
    if (slashes(cwd) <= FOLDER_KEY_DEPTH) keys.add(`f:${cwd}`);
    for (let at = cwd.indexOf("/"), depth = 0; at >= 0 && depth <= FOLDER_KEY_DEPTH; at = cwd.indexOf("/", at + 1)) {
      keys.add(`f:${cwd.slice(0, at)}`);
      depth++;
    }
  }
  for (const model of card.models) {
    keys.add(`m:${model}`);
    const parts = model.split("/");
    for (let n = 1; n <= Math.min(MODEL_KEY_PARTS, parts.length - 1); n++) keys.add(`m:${parts.slice(-n).join("/")}`);
  }
  return [...keys];
}

/**
 * The filter key whose index serves a filter, and whether that index answers it whole (the
 * dates aside, which are its range) or its cards still need checking against the rest;
 * `undefined` when no index serves it (a model name of more parts than are indexed).
 */
export function filterIndexOf(filter: CardFilter | undefined): { key: string; whole: boolean } | undefined {
  if (filter?.cwd) {
    const folder = filter.cwd.replace(/\/+$/, "");
    // The ancestor at the deepest indexed level, for a folder deeper than that.
    const parts = folder.split("/");
    const deep = parts.length - 1 > FOLDER_KEY_DEPTH;
    const key = `f:${deep ? parts.slice(0, FOLDER_KEY_DEPTH + 1).join("/") : folder}`;
    return { key, whole: !deep && !filter.model && folder === filter.cwd };
  }
  if (filter?.model && slashes(filter.model) < MODEL_KEY_PARTS) return { key: `m:${filter.model}`, whole: true };
  return undefined;
}

/** Cards read by a filtered page's first batch; a filter that skips more reads the rest of its budget at once. */
const FILTERED_BATCH = 250;

/**
 * One page of the list, read through `read` (an adapter's ordered index): at most
 * {@link LIST_SCAN_BUDGET} cards are read, whatever the filter. `indexed`: `read` reads an
 * index that answers the filter whole (every card it gives matches, but for a rare stale one).
 */
export async function readCardPage(
  userId: string,
  request: CardPageRequest,
  read: CardBatchReader,
  options: { indexed?: boolean } = {},
): Promise<CardPage> {
  const limit = Math.max(1, Math.min(Math.floor(request.limit), LIST_SCAN_BUDGET));
  let position = request.cursor ? decodeListCursor(userId, request.cursor) : undefined;
  // Read through an index that answers the filter whole, a page reads like an unfiltered one.
  const filtered = narrows(request.filter) && !options.indexed;
  const cards: SessionCard[] = [];
  let scanned = 0;
  for (;;) {
    // Unfiltered, one card past the page tells whether another page follows. Filtered, a first
    // batch; then the rest of the budget in one read (a round trip costs more than its items).
    const want = filtered ? (scanned === 0 ? FILTERED_BATCH : LIST_SCAN_BUDGET) : limit + 1 - cards.length;
    const batch = await read(position, Math.min(want, LIST_SCAN_BUDGET + 1 - scanned));
    for (const card of batch.cards) {
      if (!cardMatches(card, request.filter)) continue;
      cards.push(card);
      if (cards.length > limit) {
        const last = cards[limit - 1];
        return { cards: cards.slice(0, limit), cursor: encodeListCursor(userId, [last.lastAt, last.sessionId]) };
      }
    }
    scanned += batch.scanned;
    position = batch.last ?? position;
    if (batch.end || !position) return { cards };
    if (cards.length === limit || scanned > LIST_SCAN_BUDGET) {
      return { cards, cursor: encodeListCursor(userId, position) };
    }
  }
}
