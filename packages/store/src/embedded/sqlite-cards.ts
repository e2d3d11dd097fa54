/**
 * The library's cards in the metadata file (see {@link CardStore}): each head's card in its row of
 * `heads` (ordered by `last_at`), its filter keys in `card_keys`, both written by every commit.
 */
import { cardOf } from "../card.js";
import {
  type CardBatchReader,
  filterIndexOf,
  filterKeys,
  type ListPosition,
  lastAtRange,
  listedCard,
  readCardPage,
} from "../listing.js";
import type { CardPage, CardPageRequest, CardStore, SessionCard } from "../ports-cards.js";
import type { SessionHead } from "../ports-sessions.js";
import type { SqliteDatabase, SqliteStatement } from "./sqlite.js";

/** The cards port on the metadata file; the sessions adapter keeps its keys and cache in step. */
export class SqliteCardStore implements CardStore {
  /** {@link getCards}' statement, prepared on first use. */
  private cardsOf?: SqliteStatement;

  constructor(private readonly db: SqliteDatabase) {}

  /** Writes every head's filter keys (a file from before they were kept). */
  fillCardKeys(): void {
    const heads = this.db.prepare("SELECT card, data FROM heads").all() as { card: string | null; data: string }[];
    this.db.transaction(() => {
      for (const row of heads) {
        const card = row.card ? (JSON.parse(row.card) as SessionCard) : cardOf(JSON.parse(row.data) as SessionHead);
        this.writeCardKeys(JSON.parse(row.data).userId, card);
      }
    })();
  }

  /** Replaces a session's filter keys by its card's (in the caller's transaction). */
  writeCardKeys(userId: string, card: SessionCard): void {
    this.db.prepare("DELETE FROM card_keys WHERE user_id = ? AND session_id = ?").run(userId, card.sessionId);
    const put = this.db.prepare("INSERT INTO card_keys (user_id, session_id, key, last_at) VALUES (?, ?, ?, ?)");
    for (const key of filterKeys(card)) put.run(userId, card.sessionId, key, card.lastAt);
  }

  /**
   * Cards read lately, by user: valid while nothing was written, by this connection (every write
   * clears them) or by another one (SQLite's `data_version` moves).
   */
  private cards = { version: -1, byUser: new Map<string, SessionCard[]>() };

  cardsCache(): Map<string, SessionCard[]> {
    const version = this.db.pragma("data_version", { simple: true }) as number;
    if (version !== this.cards.version) this.cards = { version, byUser: new Map() };
    return this.cards.byUser;
  }

  /** Keeps a user's cached cards in step with this connection's own write (another's moves `data_version`). */
  updateCards(userId: string, sessionId: string, card: SessionCard | undefined): void {
    const cached = this.cards.byUser.get(userId);
    if (!cached) return;
    const next = cached.filter((c) => c.sessionId !== sessionId);
    if (card) next.push(card);
    this.cards.byUser.set(userId, Object.freeze(next) as SessionCard[]);
  }

  async listCards(userId: string): Promise<SessionCard[]> {
    const cache = this.cardsCache();
    const cached = cache.get(userId);
    if (cached) return [...cached];
    // One string of every card, parsed once: a row-by-row parse costs several times more.
    const row = this.db
      .prepare(
        "SELECT '[' || coalesce(group_concat(card, ','), '') || ']' FROM heads WHERE user_id = ? AND card IS NOT NULL",
      )
      .pluck()
      .get(userId) as string;
    const cards = JSON.parse(row) as SessionCard[];
    // A head written before cards were kept has none: its card is made from the head.
    const older = this.db
      .prepare("SELECT data FROM heads WHERE user_id = ? AND card IS NULL")
      .pluck()
      .all(userId) as string[];
    for (const data of older) cards.push(cardOf(JSON.parse(data) as SessionHead));
    if (cache.size > 16) cache.clear();
    cache.set(userId, Object.freeze(cards) as SessionCard[]);
    return [...cards];
  }

  async listCardPage(userId: string, request: CardPageRequest): Promise<CardPage> {
    const index = filterIndexOf(request.filter);
    if (index) return this.listFilteredPage(userId, request, index);
    const { low, high } = lastAtRange(request.filter);
    // Rows after a place, in the index's order (heads_by_last); a head without a card is made one.
    const after = this.db.prepare(
      `SELECT card, CASE WHEN card IS NULL THEN data END AS data FROM heads
       WHERE user_id = ? AND last_at BETWEEN ? AND ? AND (last_at < ? OR (last_at = ? AND session_id < ?))
       ORDER BY last_at DESC, session_id DESC LIMIT ?`,
    );
    return readCardPage(userId, request, async (position, count) => {
      // Nothing sorts above the range's top: with no place yet, start there.
      const [at, id] = position ?? [high, ""];
      const rows = after.all(userId, low, high, at, at, id, count) as { card: string | null; data: string | null }[];
      return this.batchOf(rows, count);
    });
  }

  /** The cards of rows read in the list's order, as a batch of a page (a head without a card is made one). */
  batchOf(rows: { card: string | null; data: string | null }[], count: number) {
    const cards = rows.map((row) =>
      listedCard(
        row.card ? (JSON.parse(row.card) as SessionCard) : cardOf(JSON.parse(row.data as string) as SessionHead),
      ),
    );
    const last = cards[cards.length - 1];
    return {
      cards,
      scanned: cards.length,
      last: last && ([last.lastAt, last.sessionId] as ListPosition),
      end: rows.length < count,
    };
  }

  /** A folder- or model-filtered page read through that key's rows of `card_keys`, in the list's order. */
  listFilteredPage(
    userId: string,
    request: CardPageRequest,
    index: { key: string; whole: boolean },
  ): Promise<CardPage> {
    const { low, high } = lastAtRange(request.filter);
    const after = this.db.prepare(
      `SELECT h.card, CASE WHEN h.card IS NULL THEN h.data END AS data FROM card_keys k
       JOIN heads h ON h.user_id = k.user_id AND h.session_id = k.session_id
       WHERE k.user_id = ? AND k.key = ? AND k.last_at BETWEEN ? AND ?
         AND (k.last_at < ? OR (k.last_at = ? AND k.session_id < ?))
       ORDER BY k.last_at DESC, k.session_id DESC LIMIT ?`,
    );
    const read: CardBatchReader = async (position, count) => {
      const [at, id] = position ?? [high, ""];
      const rows = after.all(userId, index.key, low, high, at, at, id, count) as {
        card: string | null;
        data: string | null;
      }[];
      return this.batchOf(rows, count);
    };
    return readCardPage(userId, request, read, { indexed: index.whole });
  }

  async getCards(userId: string, sessionIds: readonly string[]): Promise<SessionCard[]> {
    // One statement for the lot (a team page asks for up to 50 of each member's): the ids go in
    // as one JSON array, and duplicates match their row once.
    this.cardsOf ??= this.db.prepare(
      "SELECT card, CASE WHEN card IS NULL THEN data END AS data FROM heads WHERE user_id = ? AND session_id IN (SELECT value FROM json_each(?))",
    );
    const rows = this.cardsOf.all(userId, JSON.stringify(sessionIds)) as { card: string | null; data: string | null }[];
    return this.batchOf(rows, rows.length).cards;
  }

  /** Every head is in the list's index (the column is filled when the file is opened). */
  async fillCardList(_userId: string, _options?: { check?: boolean }): Promise<number> {
    return 0;
  }
}
