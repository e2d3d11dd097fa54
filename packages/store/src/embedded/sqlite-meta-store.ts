/**
 * Session metadata in SQLite (better-sqlite3): durable on one machine, no server. A commit is
 * one SQLite transaction whose head update is conditional on the revision, like the DynamoDB
 * adapter's conditional transaction.
 */
import Database from "better-sqlite3";
import { cardOf } from "../card.js";
import { RevisionConflictError } from "../errors.js";
import {
  type CardBatchReader,
  type CardPage,
  type CardPageRequest,
  decodeListCursor,
  encodeListCursor,
  filterIndexOf,
  filterKeys,
  type ListPosition,
  lastAtRange,
  listedCard,
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
import { dayUsagesOf, UNCOUNTED_DAY, UsageCollector, type UsageInRange } from "../usage-days.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS heads (
  user_id TEXT NOT NULL, session_id TEXT NOT NULL, revision INTEGER NOT NULL,
  updated_at TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (user_id, session_id));
CREATE INDEX IF NOT EXISTS heads_by_update ON heads (user_id, updated_at DESC, session_id DESC);
CREATE TABLE IF NOT EXISTS pages (
  user_id TEXT NOT NULL, session_id TEXT NOT NULL, generation INTEGER NOT NULL, start INTEGER NOT NULL,
  data TEXT NOT NULL, PRIMARY KEY (user_id, session_id, generation, start));
CREATE TABLE IF NOT EXISTS generations (
  user_id TEXT NOT NULL, session_id TEXT NOT NULL, generation INTEGER NOT NULL,
  data TEXT NOT NULL, PRIMARY KEY (user_id, session_id, generation));
-- The library's filter index (see \`filterKeys\`): each head's folder and model keys, in the list's order.
CREATE TABLE IF NOT EXISTS card_keys (
  user_id TEXT NOT NULL, session_id TEXT NOT NULL, key TEXT NOT NULL, last_at TEXT NOT NULL,
  PRIMARY KEY (user_id, session_id, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS card_keys_by_key ON card_keys (user_id, key, last_at DESC, session_id DESC);
-- Insights' usage by day (see \`usage-days.ts\`): each session's usage of each day, kept by every commit.
CREATE TABLE IF NOT EXISTS usage_days (
  user_id TEXT NOT NULL, day TEXT NOT NULL, session_id TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (user_id, day, session_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_days_by_session ON usage_days (user_id, session_id);
CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tokens_by_user ON tokens (user_id, id);
CREATE TABLE IF NOT EXISTS shares (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS shares_by_user ON shares (user_id);
CREATE TABLE IF NOT EXISTS login_links (hash TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS device_codes (
  user_code TEXT PRIMARY KEY, status TEXT NOT NULL, expires_at TEXT NOT NULL, data TEXT NOT NULL);
-- Facts about the store itself (its server id).
CREATE TABLE IF NOT EXISTS store_facts (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS browser_sessions (
  hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, id TEXT NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS browser_sessions_by_user ON browser_sessions (user_id, created_at);
`;

/** Columns added since the first schema: added to an older file on open (`[table, column, type]`). */
const ADDED_COLUMNS: Array<[string, string, string]> = [
  // The library's card of each head (see `cardOf`), so a whole list parses little.
  ["heads", "card", "TEXT"],
  // Share views: counted apart from `data`, so a revocation's rewrite never loses a view.
  ["shares", "views", "INTEGER NOT NULL DEFAULT 0"],
  ["shares", "last_viewed_at", "TEXT"],
  ["shares", "downloads", "INTEGER NOT NULL DEFAULT 0"],
  // The library list's order (the card's `lastAt`), indexed below.
  ["heads", "last_at", "TEXT"],
];

/** Run after the columns are added: fills what older files lack, and the indexes on added columns. */
const MIGRATIONS = `
UPDATE heads SET last_at = coalesce(json_extract(card, '$.lastAt'), json_extract(data, '$.summary.lastEntryAt'), updated_at)
  WHERE last_at IS NULL;
CREATE INDEX IF NOT EXISTS heads_by_last ON heads (user_id, last_at DESC, session_id DESC);
CREATE INDEX IF NOT EXISTS shares_by_created ON shares (user_id, json_extract(data, '$.createdAt') DESC, id DESC);
`;

type ShareRow = { data: string; views: number; last_viewed_at: string | null; downloads: number };

/** A share's record with its view count and last view. */
function shareOf(row: ShareRow): ShareRecord {
  const share = JSON.parse(row.data) as ShareRecord;
  return {
    ...share,
    views: row.views,
    downloads: row.downloads,
    ...(row.last_viewed_at ? { lastViewedAt: row.last_viewed_at } : {}),
  };
}

/** Index pages read and parsed between two turns of the event loop. */
const PAGES_AT_ONCE = 2;
/** Usage days read at once by a report (then other requests run). */
const USAGE_DAYS_AT_ONCE = 2000;
/** Reports' answers kept (by user and range), for when nothing moved since. */
const USAGE_ANSWERS_KEPT = 16;

/** Cursor: the last row's (updated_at, session_id), base64url JSON. */
function encodeCursor(head: SessionHead): string {
  return Buffer.from(JSON.stringify([head.updatedAt, head.sessionId])).toString("base64url");
}

function decodeCursor(cursor: string): [string, string] | undefined {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    return Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === "string")
      ? (value as [string, string])
      : undefined;
  } catch {
    return undefined;
  }
}

/** A share's record without its counters (they live in their own columns). */
function withoutViews(share: ShareRecord): ShareRecord {
  const { views: _views, lastViewedAt: _last, downloads: _downloads, ...rest } = share;
  return rest;
}

/**
 * The embedded {@link MetaStore}: heads, the tree index, tokens, shares, sign-in links and browser
 * sessions in one SQLite file
 * (WAL). A commit whose head revision moved since it was read throws
 * `RevisionConflictError` with the current head, as the DynamoDB adapter does.
 */
export class SqliteMetaStore implements MetaStore {
  private readonly db: Database.Database;
  /** Writes of each user's usage days by this connection (see {@link listUsage}). */
  private readonly usageRevisions = new Map<string, number>();
  private readonly usageAnswers = new Map<string, { revision: string; answer: UsageInRange }>();

  constructor(path: string) {
    this.db = new Database(path);
    // WAL + synchronous=FULL: a committed transaction survives a crash or power loss.
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    const has = (table: string) =>
      this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(table) !== undefined;
    const keyed = has("card_keys");
    const dated = has("usage_days");
    this.db.exec(SCHEMA);
    for (const [table, column, type] of ADDED_COLUMNS) {
      const columns = this.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
      if (!columns.some((c) => c.name === column)) this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
    }
    this.db.exec(MIGRATIONS);
    // A file written before the filter index: its heads' keys, once.
    if (!keyed) this.fillCardKeys();
    // And one from before usage was kept by day: every head's days, once.
    if (!dated) this.fillUsageDays();
  }

  /** Writes every head's usage by day (a file from before it was kept). */
  private fillUsageDays(): void {
    const heads = this.db.prepare("SELECT data FROM heads").all() as { data: string }[];
    this.db.transaction(() => {
      for (const row of heads) this.writeUsageDays(JSON.parse(row.data) as SessionHead);
    })();
  }

  /**
   * Writes a head's usage of `days` (all of its days when not given) again, in the caller's
   * transaction; a day the head no longer has is removed.
   */
  private writeUsageDays(head: SessionHead, days?: readonly string[]): void {
    this.usageMoved(head.userId);
    const usages = dayUsagesOf(head.summary);
    const remove = this.db.prepare("DELETE FROM usage_days WHERE user_id = ? AND day = ? AND session_id = ?");
    const put = this.db.prepare("INSERT INTO usage_days (user_id, day, session_id, data) VALUES (?, ?, ?, ?)");
    for (const day of days ?? usages.keys()) {
      remove.run(head.userId, day, head.sessionId);
      const usage = usages.get(day);
      if (usage !== undefined) put.run(head.userId, day, head.sessionId, usage);
    }
  }

  /** Writes every head's filter keys (a file from before they were kept). */
  private fillCardKeys(): void {
    const heads = this.db.prepare("SELECT card, data FROM heads").all() as { card: string | null; data: string }[];
    this.db.transaction(() => {
      for (const row of heads) {
        const card = row.card ? (JSON.parse(row.card) as SessionCard) : cardOf(JSON.parse(row.data) as SessionHead);
        this.writeCardKeys(JSON.parse(row.data).userId, card);
      }
    })();
  }

  /** Replaces a session's filter keys by its card's (in the caller's transaction). */
  private writeCardKeys(userId: string, card: SessionCard): void {
    this.db.prepare("DELETE FROM card_keys WHERE user_id = ? AND session_id = ?").run(userId, card.sessionId);
    const put = this.db.prepare("INSERT INTO card_keys (user_id, session_id, key, last_at) VALUES (?, ?, ?, ?)");
    for (const key of filterKeys(card)) put.run(userId, card.sessionId, key, card.lastAt);
  }

  close(): void {
    this.db.close();
  }

  /** Every user that has a session (for passes over the whole store, such as search catch-up). */
  async users(): Promise<string[]> {
    const rows = this.db.prepare("SELECT DISTINCT user_id FROM heads").all() as { user_id: string }[];
    return rows.map((r) => r.user_id);
  }

  async getHead(userId: string, sessionId: string): Promise<SessionHead | undefined> {
    const row = this.db.prepare("SELECT data FROM heads WHERE user_id = ? AND session_id = ?").get(userId, sessionId) as
      | { data: string }
      | undefined;
    return row ? (JSON.parse(row.data) as SessionHead) : undefined;
  }

  async commit(commit: Commit): Promise<void> {
    const { head } = commit;
    const run = this.db.transaction(() => {
      const data = JSON.stringify(head);
      const made = cardOf(head);
      const card = JSON.stringify(made);
      if (commit.expectedRevision === null) {
        const inserted = this.db
          .prepare(
            "INSERT INTO heads (user_id, session_id, revision, updated_at, data, card, last_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
          )
          .run(head.userId, head.sessionId, head.revision, head.updatedAt, data, card, made.lastAt);
        if (inserted.changes === 0) return false;
      } else {
        const updated = this.db
          .prepare(
            "UPDATE heads SET revision = ?, updated_at = ?, data = ?, card = ?, last_at = ? WHERE user_id = ? AND session_id = ? AND revision = ?",
          )
          .run(
            head.revision,
            head.updatedAt,
            data,
            card,
            made.lastAt,
            head.userId,
            head.sessionId,
            commit.expectedRevision,
          );
        if (updated.changes === 0) return false;
      }
      this.writeCardKeys(head.userId, made);
      this.writeUsageDays(head, commit.usageDays);
      // A page at the same start can only be left by a head that went back (its commit's record
      // lost): the commit that writes those bytes again writes their page again.
      const putPage = this.db.prepare(
        "INSERT OR REPLACE INTO pages (user_id, session_id, generation, start, data) VALUES (?, ?, ?, ?, ?)",
      );
      for (const page of commit.pages ?? []) {
        putPage.run(head.userId, head.sessionId, page.generation, page.start, JSON.stringify(page));
      }
      if (commit.archive) {
        this.db
          .prepare("INSERT OR REPLACE INTO generations (user_id, session_id, generation, data) VALUES (?, ?, ?, ?)")
          .run(head.userId, head.sessionId, commit.archive.generation, JSON.stringify(commit.archive));
      }
      return true;
    });
    if (!run.immediate()) throw new RevisionConflictError(await this.getHead(head.userId, head.sessionId));
    this.updateCards(head.userId, head.sessionId, cardOf(head));
  }

  async listHeads(userId: string, options: { limit: number; cursor?: string }) {
    const after = options.cursor ? decodeCursor(options.cursor) : undefined;
    const rows = (
      after
        ? this.db
            .prepare(
              `SELECT data FROM heads WHERE user_id = ? AND (updated_at < ? OR (updated_at = ? AND session_id < ?))
               ORDER BY updated_at DESC, session_id DESC LIMIT ?`,
            )
            .all(userId, after[0], after[0], after[1], options.limit + 1)
        : this.db
            .prepare("SELECT data FROM heads WHERE user_id = ? ORDER BY updated_at DESC, session_id DESC LIMIT ?")
            .all(userId, options.limit + 1)
    ) as { data: string }[];
    const heads = rows.slice(0, options.limit).map((row) => JSON.parse(row.data) as SessionHead);
    const more = rows.length > options.limit;
    return more ? { heads, cursor: encodeCursor(heads[heads.length - 1]) } : { heads };
  }

  /**
   * Cards read lately, by user: valid while nothing was written, by this connection (every write
   * clears them) or by another one (SQLite's `data_version` moves).
   */
  private cards = { version: -1, byUser: new Map<string, SessionCard[]>() };

  private cardsCache(): Map<string, SessionCard[]> {
    const version = this.db.pragma("data_version", { simple: true }) as number;
    if (version !== this.cards.version) this.cards = { version, byUser: new Map() };
    return this.cards.byUser;
  }

  /** Keeps a user's cached cards in step with this connection's own write (another's moves `data_version`). */
  private updateCards(userId: string, sessionId: string, card: SessionCard | undefined): void {
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
  private batchOf(rows: { card: string | null; data: string | null }[], count: number) {
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
  private listFilteredPage(
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
    const get = this.db.prepare("SELECT card, data FROM heads WHERE user_id = ? AND session_id = ?");
    const cards: SessionCard[] = [];
    for (const id of new Set(sessionIds)) {
      const row = get.get(userId, id) as { card: string | null; data: string } | undefined;
      if (row) cards.push(listedCard(row.card ? (JSON.parse(row.card) as SessionCard) : cardOf(JSON.parse(row.data))));
    }
    return cards;
  }

  /** A user's usage days changed (a commit, a deletion): their kept answers are stale. */
  private usageMoved(userId: string): void {
    this.usageRevisions.set(userId, (this.usageRevisions.get(userId) ?? 0) + 1);
  }

  /**
   * The range's usage, read a few thousand days at a time with other requests let in between (a
   * year of a large library is a hundred thousand rows). The same object as last time when no
   * day of the user moved since, here or in another connection (callers may keep what they
   * made of it).
   */
  async listUsage(userId: string, range: { from: string; to: string }): Promise<UsageInRange> {
    const key = `${userId}\u0000${range.from}\u0000${range.to}`;
    const revision = () =>
      `${this.usageRevisions.get(userId) ?? 0}/${(this.db.pragma("data_version", { simple: true }) as number) ?? 0}`;
    const at = revision();
    const kept = this.usageAnswers.get(key);
    if (kept?.revision === at) return kept.answer;
    // Keyset pages over the primary key (user, day, session): each page seeks, none rescans.
    const next = this.db.prepare(
      `SELECT day, session_id, data FROM usage_days WHERE user_id = ? AND (day, session_id) > (?, ?) AND day <= ?
       ORDER BY day, session_id LIMIT ?`,
    );
    const collector = new UsageCollector();
    for (const [from, to] of [
      [UNCOUNTED_DAY, UNCOUNTED_DAY],
      [range.from, range.to],
    ]) {
      for (let after: [string, string] = [from, ""]; ; ) {
        const rows = next.all(userId, ...after, to, USAGE_DAYS_AT_ONCE) as {
          day: string;
          session_id: string;
          data: string;
        }[];
        for (const row of rows) collector.add(row.day, row.session_id, JSON.parse(row.data));
        if (rows.length < USAGE_DAYS_AT_ONCE) break;
        const last = rows[rows.length - 1];
        after = [last.day, last.session_id];
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const answer = collector.result();
    // Read between two looks at the revision: kept only when nothing moved meanwhile.
    if (revision() === at) {
      this.usageAnswers.delete(key);
      this.usageAnswers.set(key, { revision: at, answer });
      if (this.usageAnswers.size > USAGE_ANSWERS_KEPT)
        this.usageAnswers.delete(this.usageAnswers.keys().next().value as string);
    }
    return answer;
  }

  /** Every head is in the list's index (the column is filled when the file is opened). */
  async fillCardList(_userId: string, _options?: { check?: boolean }): Promise<number> {
    return 0;
  }

  async getPages(userId: string, sessionId: string, generation: number, from = 0): Promise<IndexPage[]> {
    // SQLite answers synchronously: a large session's pages are read and parsed a few at a
    // time, letting other requests run in between (a million lines' pages take seconds).
    const next = this.db.prepare(
      "SELECT start, data FROM pages WHERE user_id = ? AND session_id = ? AND generation = ? AND start >= ? ORDER BY start LIMIT ?",
    );
    const pages: IndexPage[] = [];
    for (let start = from; ; ) {
      const rows = next.all(userId, sessionId, generation, start, PAGES_AT_ONCE) as { start: number; data: string }[];
      for (const row of rows) pages.push(JSON.parse(row.data) as IndexPage);
      if (rows.length < PAGES_AT_ONCE) return pages;
      start = rows[rows.length - 1].start + 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async getArchived(userId: string, sessionId: string): Promise<GenerationState[]> {
    const rows = this.db
      .prepare("SELECT data FROM generations WHERE user_id = ? AND session_id = ? ORDER BY generation")
      .all(userId, sessionId) as { data: string }[];
    return rows.map((row) => JSON.parse(row.data) as GenerationState);
  }

  async deleteSession(userId: string, sessionId: string, revokedAt: string): Promise<void> {
    this.usageMoved(userId);
    this.db.transaction(() => {
      for (const table of ["heads", "card_keys", "usage_days", "pages", "generations"]) {
        this.db.prepare(`DELETE FROM ${table} WHERE user_id = ? AND session_id = ?`).run(userId, sessionId);
      }
      const shares = this.db.prepare("SELECT data FROM shares WHERE user_id = ?").all(userId) as { data: string }[];
      const revoke = this.db.prepare("UPDATE shares SET data = ? WHERE id = ?");
      for (const row of shares) {
        const share = JSON.parse(row.data) as ShareRecord;
        if (share.sessionId !== sessionId || share.revokedAt) continue;
        revoke.run(JSON.stringify({ ...share, revokedAt }), share.id);
      }
    })();
    this.updateCards(userId, sessionId, undefined);
  }

  async serverId(candidate: string): Promise<string> {
    this.db.prepare("INSERT OR IGNORE INTO store_facts (name, value) VALUES ('server_id', ?)").run(candidate);
    const row = this.db.prepare("SELECT value FROM store_facts WHERE name = 'server_id'").get() as { value: string };
    return row.value;
  }

  async putToken(token: TokenRecord): Promise<void> {
    this.db
      .prepare("INSERT INTO tokens (hash, user_id, id, data) VALUES (?, ?, ?, ?)")
      .run(token.hash, token.userId, token.id, JSON.stringify(token));
  }

  async findToken(hash: string): Promise<TokenRecord | undefined> {
    const row = this.db.prepare("SELECT data FROM tokens WHERE hash = ?").get(hash) as { data: string } | undefined;
    return row ? (JSON.parse(row.data) as TokenRecord) : undefined;
  }

  async listTokens(userId: string): Promise<TokenRecord[]> {
    const rows = this.db.prepare("SELECT data FROM tokens WHERE user_id = ? ORDER BY id").all(userId) as {
      data: string;
    }[];
    return rows.map((row) => JSON.parse(row.data) as TokenRecord);
  }

  async listTokenPage(userId: string, page: { limit: number; cursor?: string }) {
    const after = page.cursor ? decodeListCursor(userId, page.cursor)[1] : "";
    const rows = this.db
      .prepare("SELECT data FROM tokens WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?")
      .all(userId, after, page.limit + 1) as { data: string }[];
    const tokens = rows.slice(0, page.limit).map((row) => JSON.parse(row.data) as TokenRecord);
    const last = tokens[tokens.length - 1];
    return rows.length > page.limit ? { tokens, cursor: encodeListCursor(userId, [last.id, last.id]) } : { tokens };
  }

  async deleteToken(userId: string, id: string): Promise<boolean> {
    return this.db.prepare("DELETE FROM tokens WHERE user_id = ? AND id = ?").run(userId, id).changes > 0;
  }

  async renameToken(userId: string, id: string, name: string): Promise<boolean> {
    const { changes } = this.db
      .prepare("UPDATE tokens SET data = json_set(data, '$.name', ?) WHERE user_id = ? AND id = ?")
      .run(name, userId, id);
    return changes > 0;
  }

  async putShare(share: ShareRecord): Promise<void> {
    this.db
      .prepare(
        "INSERT INTO shares (id, user_id, data) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, data = excluded.data",
      )
      .run(share.id, share.userId, JSON.stringify(withoutViews(share)));
  }

  async getShare(id: string): Promise<ShareRecord | undefined> {
    const row = this.db.prepare("SELECT data, views, last_viewed_at, downloads FROM shares WHERE id = ?").get(id) as
      | ShareRow
      | undefined;
    return row ? shareOf(row) : undefined;
  }

  async listShares(userId: string): Promise<ShareRecord[]> {
    const rows = this.db
      .prepare("SELECT data, views, last_viewed_at, downloads FROM shares WHERE user_id = ?")
      .all(userId) as ShareRow[];
    return rows.map(shareOf).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  async listSharePage(userId: string, page: { limit: number; cursor?: string }) {
    const [at, id] = page.cursor ? decodeListCursor(userId, page.cursor) : ["\u{10FFFF}", ""];
    const rows = this.db
      .prepare(
        `SELECT data, views, last_viewed_at, downloads FROM shares WHERE user_id = ?
         AND (json_extract(data, '$.createdAt') < ? OR (json_extract(data, '$.createdAt') = ? AND id < ?))
         ORDER BY json_extract(data, '$.createdAt') DESC, id DESC LIMIT ?`,
      )
      .all(userId, at, at, id, page.limit + 1) as ShareRow[];
    const shares = rows.slice(0, page.limit).map(shareOf);
    if (rows.length <= page.limit) return { shares };
    const last = shares[shares.length - 1];
    return { shares, cursor: encodeListCursor(userId, [last.createdAt, last.id]) };
  }

  async recordShareView(id: string, at: string): Promise<void> {
    this.db
      .prepare(
        "UPDATE shares SET views = views + 1, last_viewed_at = max(coalesce(last_viewed_at, ''), ?) WHERE id = ?",
      )
      .run(at, id);
  }

  async recordShareDownload(id: string): Promise<void> {
    this.db.prepare("UPDATE shares SET downloads = downloads + 1 WHERE id = ?").run(id);
  }

  async touchToken(hash: string, lastUsedAt: string): Promise<void> {
    this.db.prepare("UPDATE tokens SET data = json_set(data, '$.lastUsedAt', ?) WHERE hash = ?").run(lastUsedAt, hash);
  }

  async putLoginLink(link: LoginLinkRecord): Promise<void> {
    this.db.prepare("INSERT INTO login_links (hash, data) VALUES (?, ?)").run(link.hash, JSON.stringify(link));
    // Links live a minute: the ones nobody redeemed go when the next is made.
    const now = link.createdAt;
    this.db.prepare("DELETE FROM login_links WHERE json_extract(data, '$.expiresAt') < ?").run(now);
  }

  async consumeLoginLink(hash: string): Promise<LoginLinkRecord | undefined> {
    // One statement deletes and returns: a second redemption finds no row.
    const row = this.db.prepare("DELETE FROM login_links WHERE hash = ? RETURNING data").get(hash) as
      | { data: string }
      | undefined;
    return row ? (JSON.parse(row.data) as LoginLinkRecord) : undefined;
  }

  async putDeviceCode(record: DeviceCodeRecord): Promise<boolean> {
    // Codes live minutes: the expired ones go when the next is made, which frees their user code.
    this.db.prepare("DELETE FROM device_codes WHERE expires_at <= ?").run(record.createdAt);
    const { changes } = this.db
      .prepare("INSERT OR IGNORE INTO device_codes (user_code, status, expires_at, data) VALUES (?, ?, ?, ?)")
      .run(record.userCode, record.status, record.expiresAt, JSON.stringify(record));
    return changes === 1;
  }

  async getDeviceCode(userCode: string): Promise<DeviceCodeRecord | undefined> {
    const row = this.db.prepare("SELECT data FROM device_codes WHERE user_code = ?").get(userCode) as
      | { data: string }
      | undefined;
    return row ? (JSON.parse(row.data) as DeviceCodeRecord) : undefined;
  }

  async updateDeviceCode(record: DeviceCodeRecord, expected: DeviceCodeStatus): Promise<boolean> {
    const { changes } = this.db
      .prepare("UPDATE device_codes SET status = ?, expires_at = ?, data = ? WHERE user_code = ? AND status = ?")
      .run(record.status, record.expiresAt, JSON.stringify(record), record.userCode, expected);
    return changes === 1;
  }

  async consumeDeviceCode(userCode: string, expected: DeviceCodeStatus): Promise<DeviceCodeRecord | undefined> {
    const row = this.db
      .prepare("DELETE FROM device_codes WHERE user_code = ? AND status = ? RETURNING data")
      .get(userCode, expected) as { data: string } | undefined;
    return row ? (JSON.parse(row.data) as DeviceCodeRecord) : undefined;
  }

  async putBrowserSession(session: BrowserSessionRecord): Promise<void> {
    this.db
      .prepare("INSERT INTO browser_sessions (hash, user_id, id, created_at, data) VALUES (?, ?, ?, ?, ?)")
      .run(session.hash, session.userId, session.id, session.createdAt, JSON.stringify(session));
  }

  async findBrowserSession(hash: string): Promise<BrowserSessionRecord | undefined> {
    const row = this.db.prepare("SELECT data FROM browser_sessions WHERE hash = ?").get(hash) as
      | { data: string }
      | undefined;
    return row ? (JSON.parse(row.data) as BrowserSessionRecord) : undefined;
  }

  async listBrowserSessions(userId: string): Promise<BrowserSessionRecord[]> {
    const rows = this.db
      .prepare("SELECT data FROM browser_sessions WHERE user_id = ? ORDER BY created_at, id")
      .all(userId) as { data: string }[];
    return rows.map((row) => JSON.parse(row.data) as BrowserSessionRecord);
  }

  async listBrowserSessionPage(userId: string, page: { limit: number; cursor?: string }) {
    const [at, id] = page.cursor ? decodeListCursor(userId, page.cursor) : ["", ""];
    const rows = this.db
      .prepare(
        `SELECT data FROM browser_sessions WHERE user_id = ? AND (created_at > ? OR (created_at = ? AND id > ?))
         ORDER BY created_at, id LIMIT ?`,
      )
      .all(userId, at, at, id, page.limit + 1) as { data: string }[];
    const sessions = rows.slice(0, page.limit).map((row) => JSON.parse(row.data) as BrowserSessionRecord);
    const last = sessions[sessions.length - 1];
    return rows.length > page.limit
      ? { sessions, cursor: encodeListCursor(userId, [last.createdAt, last.id]) }
      : { sessions };
  }

  async touchBrowserSession(hash: string, lastUsedAt: string): Promise<void> {
    this.db
      .prepare("UPDATE browser_sessions SET data = json_set(data, '$.lastUsedAt', ?) WHERE hash = ?")
      .run(lastUsedAt, hash);
  }

  async deleteBrowserSession(userId: string, id: string): Promise<boolean> {
    return this.db.prepare("DELETE FROM browser_sessions WHERE user_id = ? AND id = ?").run(userId, id).changes > 0;
  }

  async deleteBrowserSessions(userId: string): Promise<number> {
    return this.db.prepare("DELETE FROM browser_sessions WHERE user_id = ?").run(userId).changes;
  }
}
