/**
 * The embedded search adapter: SQLite FTS5 (node:sqlite, or better-sqlite3 on Node 20: `openSqlite`). Entries' facts live in a
 * plain table (`entries`), their text in an FTS5 table sharing its rowid; session facts (cwd,
 * name, models, labels) in small tables the filters join.
 *
 * Tenancy: each user's text is in an FTS5 table of its own (`docs_<n>`, named in `users`), so
 * a user's vocabulary (prefix completions), ranking statistics (bm25's document counts and
 * lengths) and the work of a query depend on that user's documents only, exactly as in the AWS
 * adapter's one file per user (which keeps its one user's text in `docs`).
 */
import { chmodSync, closeSync, existsSync, openSync } from "node:fs";
import { openSqlite } from "@pisync/store/sqlite";
import * as z from "zod/mini";
import { batchOf, MAX_DOCUMENT_CHARS, MAX_LINE_BYTES } from "./documents.js";
import type {
  DocumentKind,
  EntryHit,
  FileTouched,
  IndexBatch,
  IndexState,
  LineSource,
  SearchIndex,
  SearchOptions,
  SearchPage,
  SessionHit,
} from "./port.js";
import { filePatterns, ftsMatch, QueryError, type Role, type SearchQuery, SearchTimeout } from "./query.js";
import { snippetOf } from "./snippet.js";
import type { SqliteDriver } from "./sqlite-driver.js";

/** Rows of hits read for one page at most: bounds the work of a broad query. */
const MAX_SCAN = 5000;
/** The kinds of each role (documents.ts gives every kind one role). */
const KINDS_OF: Record<Role, DocumentKind[]> = {
  user: ["user", "name", "label"],
  assistant: ["assistant", "thinking", "summary"],
  tool: ["tool_call", "tool_result", "bash"],
};
/** Bounds on the work of one query. */
export interface SearchBounds {
  /**
   * Matching entries ranked at most, the last indexed first: a term found in most of a large
   * library is ranked among its newest matches instead of scoring every one (narrower queries
   * rank all their matches).
   */
  rankedEntries: number;
  /**
   * Words a prefix (`word*`) is searched as at most: its most common completions. FTS5 would
   * merge the lists of every word starting with it (in a large library, millions of entries for
   * a short prefix); a bounded OR of words is read lazily, newest first, like one word.
   * `Infinity`: every word starting with it, as FTS5 does.
   */
  prefixWords: number;
  /**
   * The work a `file:` pattern may cost, charged before it runs: the paths of the user's
   * entries it is matched against, times its length, times one more than its `*`s (SQLite's
   * GLOB compares each path character by character, again from each place a `*` lets it). A
   * dearer pattern is refused as a bad query. Default: {@link DEFAULT_BOUNDS}'.
   */
  fileWork?: number;
}

/**
 * The bounds the adapters run with: measured on a library of 10,000 sessions (2 GB); a
 * `file:` pattern costs about a second on a small machine at its bound.
 */
const DEFAULT_FILE_WORK = 30_000_000;
export const DEFAULT_BOUNDS: SearchBounds = { rankedEntries: 2000, prefixWords: 16, fileWork: DEFAULT_FILE_WORK };
/**
 * The SQL function a search's statements call as rows go by (given a column, so that SQLite
 * calls it for each row, never once up front): it fails the statement once the search's
 * deadline has passed, so a search past its time limit stops working, not only answering.
 */
const DEADLINE_FN = "pisync_deadline";
/** Rows between two looks at the clock. */
const CLOCK_EVERY = 64;
/** Entries shown per session. */
const ENTRIES_PER_SESSION = 3;

/**
 * The version of the index's stored layout (its tables and what they hold): bump it when a
 * change needs the index rebuilt, so that a kept copy (the search bench's) is made again.
 */
export const INDEX_LAYOUT = "v3";
/** {@link INDEX_LAYOUT} as SQLite's `user_version`: an index of another layout is dropped and rebuilt. */
const LAYOUT_VERSION = 3;
/** Files listed for a session page at most. */
export const MAX_FILES_LISTED = 500;

const SCHEMA = `
-- Entries point at their session by its small integer key: per-entry rows stay short.
CREATE TABLE IF NOT EXISTS sessions (
  key INTEGER PRIMARY KEY, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
  generation INTEGER NOT NULL, offset INTEGER NOT NULL,
  cwd TEXT, name TEXT, models TEXT NOT NULL DEFAULT ' ',
  UNIQUE (user_id, session_id));
CREATE TABLE IF NOT EXISTS labels (
  session_key INTEGER NOT NULL, entry_id TEXT NOT NULL, label TEXT NOT NULL,
  PRIMARY KEY (session_key, entry_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY, session_key INTEGER NOT NULL, entry_id TEXT NOT NULL,
  kind TEXT NOT NULL, time INTEGER NOT NULL, line_offset INTEGER, line_length INTEGER);
CREATE INDEX IF NOT EXISTS entries_session ON entries (session_key);
-- The paths an entry's tool calls name (documents.ts), by the entry's id: what file: matches.
CREATE TABLE IF NOT EXISTS files (
  entry INTEGER NOT NULL, path TEXT NOT NULL, PRIMARY KEY (entry, path)) WITHOUT ROWID;
-- Each user's text table: docs_<n> (numbers never reused, so a cleared user's old name stays unused).
CREATE TABLE IF NOT EXISTS users (n INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL UNIQUE);
`;
/**
 * A text table. Contentless: the text is not kept (the index stays about half the size of the
 * text it indexes); snippets are cut from the stored lines.
 */
const docsTable = (name: string) => `CREATE VIRTUAL TABLE IF NOT EXISTS ${name} USING fts5(
  text, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2')`;
/** A text table's vocabulary (one row per word, with the entries it is in): per connection, stores nothing. */
const vocabulary = (name: string) =>
  `CREATE VIRTUAL TABLE IF NOT EXISTS temp.${name}_words USING fts5vocab(main, ${name}, row)`;
/** The one text table of a file that holds one user's index (the AWS adapter's). */
const ONE_USER_TABLE = "docs";

/** Where the adapter keeps text: a table per user (one file for everyone), or one table (a file per user). */
export type Tenancy = "table-per-user" | "file-per-user";

/** A prefix as the tokenizer folds words (lower case, no diacritics), when it is one word. */
function foldedWord(prefix: string): string | undefined {
  const folded = prefix.toLowerCase().normalize("NFD").replace(/\p{M}/gu, "");
  return /^[\p{L}\p{N}]+$/u.test(folded) ? folded : undefined;
}

const Cursor = z.object({ skip: z.int().check(z.minimum(0), z.maximum(MAX_SCAN)) });

function encodeCursor(skip: number): string {
  return Buffer.from(JSON.stringify({ skip })).toString("base64url");
}

function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  try {
    return Cursor.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))).skip;
  } catch {
    throw new QueryError("the cursor is not one this search returned");
  }
}

interface HitRow {
  session_id: string;
  entry_id: string;
  kind: EntryHit["kind"];
  time: number;
  line_offset: number | null;
  line_length: number | null;
  generation: number;
  name: string | null;
  cwd: string | null;
}

/** The search index on one SQLite file (or `:memory:`). */
export class SqliteSearchIndex implements SearchIndex {
  private readonly db: SqliteDriver;
  /** The text tables whose vocabulary this connection has made (on a first prefix: writers never need it). */
  private readonly vocabularies = new Set<string>();
  private readonly tenancy: Tenancy;
  /** The running search's deadline (epoch ms). */
  private deadline = Number.POSITIVE_INFINITY;
  private rowsSeen = 0;

  /**
   * Opens (or creates, readable by its owner only) the index at `path`; `:memory:` for a test:
   * a table per user. Or runs on a database another driver opened, holding one user's index
   * (the AWS adapter's WebAssembly SQLite, a file per user).
   * `lines` reads stored lines back for snippets; `bounds` bound the work of one query.
   */
  constructor(
    path: string | SqliteDriver,
    private readonly lines: LineSource,
    private readonly bounds: SearchBounds = DEFAULT_BOUNDS,
  ) {
    if (typeof path !== "string") {
      this.tenancy = "file-per-user";
      this.db = path;
      this.watchDeadline();
      this.db.exec(SCHEMA);
      this.db.exec(docsTable(ONE_USER_TABLE));
      return;
    }
    this.tenancy = "table-per-user";
    if (path !== ":memory:") {
      if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
      chmodSync(path, 0o600);
    }
    this.db = openSqlite(path);
    this.watchDeadline();
    this.db.pragma("journal_mode = WAL");
    // Derived data: a crash may lose the last commits, and the catch-up pass redoes them.
    this.db.pragma("synchronous = NORMAL");
    if (this.layoutVersion() === LAYOUT_VERSION) {
      this.db.exec(SCHEMA); // nothing to make: a reader's open writes nothing
      return;
    }
    // Holding the write lock from the start: the writer thread and a reader may open a file at once.
    this.db.exec("BEGIN IMMEDIATE");
    try {
      this.dropOldLayout();
      this.db.exec(SCHEMA);
      this.db.pragma(`user_version = ${LAYOUT_VERSION}`);
      this.db.exec("COMMIT");
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  /** Defines {@link DEADLINE_FN} on the connection: it throws once the running search's deadline has passed. */
  private watchDeadline(): void {
    this.db.function(DEADLINE_FN, (_row?: unknown) => {
      if (++this.rowsSeen % CLOCK_EVERY === 0 && Date.now() > this.deadline) {
        throw new SearchTimeout("the search passed its deadline");
      }
      return 1;
    });
  }

  private layoutVersion(): number | undefined {
    const [row] = this.db.pragma("user_version") as Array<{ user_version: number }>;
    return row?.user_version;
  }

  /**
   * An index of an older layout (one `docs` table for everyone; no files) is dropped: derived
   * data, which the catch-up pass indexes again from the stored bytes.
   */
  private dropOldLayout(): void {
    if (this.layoutVersion() === LAYOUT_VERSION) return; // another connection made it meanwhile
    const tables = this.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('docs', 'sessions', 'users')")
      .all() as { name: string }[];
    if (tables.length === 0) return; // a new file
    const names = tables.map((t) => t.name);
    const perUser = names.includes("users")
      ? (this.db.prepare("SELECT n FROM users").all() as { n: number }[]).map((r) => `docs_${r.n}`)
      : [];
    for (const table of [...perUser, "docs", "entries", "labels", "sessions", "users", "files"]) {
      this.db.exec(`DROP TABLE IF EXISTS ${table}`);
    }
  }

  /** The user's text table, made when `create` and it has none yet; undefined when it has none. */
  private tableOf(userId: string, create = false): string | undefined {
    if (this.tenancy === "file-per-user") return ONE_USER_TABLE;
    const row = this.db.prepare("SELECT n FROM users WHERE user_id = ?").get(userId) as { n: number } | undefined;
    if (row) return `docs_${row.n}`;
    if (!create) return undefined;
    const { lastInsertRowid } = this.db.prepare("INSERT INTO users (user_id) VALUES (?)").run(userId);
    const name = `docs_${Number(lastInsertRowid)}`;
    this.db.exec(docsTable(name));
    return name;
  }

  close(): void {
    this.db.close();
  }

  /** Merges each text table's segments into one and gives freed pages back (after a rebuild). */
  optimize(): void {
    const tables =
      this.tenancy === "file-per-user"
        ? [ONE_USER_TABLE]
        : (this.db.prepare("SELECT n FROM users").all() as { n: number }[]).map((r) => `docs_${r.n}`);
    for (const table of tables) this.db.exec(`INSERT INTO ${table} (${table}) VALUES ('optimize')`);
    this.db.exec("VACUUM");
  }

  async state(userId: string, sessionId: string): Promise<IndexState | undefined> {
    return this.db
      .prepare("SELECT generation, offset FROM sessions WHERE user_id = ? AND session_id = ?")
      .get(userId, sessionId) as IndexState | undefined;
  }

  async sessions(userId: string): Promise<Array<IndexState & { sessionId: string }>> {
    return this.db
      .prepare("SELECT session_id AS sessionId, generation, offset FROM sessions WHERE user_id = ?")
      .all(userId) as Array<IndexState & { sessionId: string }>;
  }

  async users(): Promise<string[]> {
    return (this.db.prepare("SELECT DISTINCT user_id FROM sessions").all() as { user_id: string }[]).map(
      (r) => r.user_id,
    );
  }

  private keyOf(userId: string, sessionId: string): number | undefined {
    const row = this.db.prepare("SELECT key FROM sessions WHERE user_id = ? AND session_id = ?").get(userId, sessionId);
    return (row as { key: number } | undefined)?.key;
  }

  private removeNow(userId: string, sessionId: string): void {
    const key = this.keyOf(userId, sessionId);
    const table = this.tableOf(userId);
    if (key === undefined || table === undefined) return;
    this.db.prepare(`DELETE FROM ${table} WHERE rowid IN (SELECT id FROM entries WHERE session_key = ?)`).run(key);
    this.db.prepare("DELETE FROM files WHERE entry IN (SELECT id FROM entries WHERE session_key = ?)").run(key);
    this.db.prepare("DELETE FROM entries WHERE session_key = ?").run(key);
    this.db.prepare("DELETE FROM labels WHERE session_key = ?").run(key);
    this.db.prepare("DELETE FROM sessions WHERE key = ?").run(key);
  }

  async apply(batch: IndexBatch): Promise<boolean> {
    return this.db.transaction(() => this.applyNow(batch))();
  }

  async applyAll(batches: readonly IndexBatch[]): Promise<boolean[]> {
    return this.db.transaction(() => batches.map((batch) => this.applyNow(batch)))();
  }

  private applyNow(batch: IndexBatch): boolean {
    const { userId, sessionId } = batch;
    return this.db.transaction(() => {
      const state = this.db
        .prepare("SELECT generation, offset FROM sessions WHERE user_id = ? AND session_id = ?")
        .get(userId, sessionId) as IndexState | undefined;
      if (batch.from === 0) this.removeNow(userId, sessionId);
      else if (!state || state.generation !== batch.generation || state.offset !== batch.from) return false;
      if (batch.from === 0) {
        this.db
          .prepare("INSERT INTO sessions (user_id, session_id, generation, offset, cwd) VALUES (?, ?, ?, 0, ?)")
          .run(userId, sessionId, batch.generation, batch.cwd ?? null);
      }
      const key = this.keyOf(userId, sessionId) as number;
      const entry = this.db.prepare(
        "INSERT INTO entries (session_key, entry_id, kind, time, line_offset, line_length) VALUES (?, ?, ?, ?, ?, ?)",
      );
      const text = this.db.prepare(`INSERT INTO ${this.tableOf(userId, true)} (rowid, text) VALUES (?, ?)`);
      const file = this.db.prepare("INSERT OR IGNORE INTO files (entry, path) VALUES (?, ?)");
      const models = new Set<string>();
      for (const doc of batch.documents) {
        const row = entry.run(key, doc.entryId, doc.kind, doc.time, doc.at?.offset ?? null, doc.at?.length ?? null);
        text.run(row.lastInsertRowid, doc.text);
        for (const path of doc.files ?? []) file.run(row.lastInsertRowid, path);
        if (doc.model) models.add(doc.model);
      }
      for (const [target, label] of Object.entries(batch.labels)) {
        if (label === null) {
          this.db.prepare("DELETE FROM labels WHERE session_key = ? AND entry_id = ?").run(key, target);
        } else {
          this.db
            .prepare("INSERT OR REPLACE INTO labels (session_key, entry_id, label) VALUES (?, ?, ?)")
            .run(key, target, label);
        }
      }
      const current = this.db.prepare("SELECT models FROM sessions WHERE key = ?").get(key) as { models: string };
      const known = new Set(current.models.split(" ").filter(Boolean));
      for (const model of models) known.add(model);
      const setName = batch.name !== undefined ? ", name = @name" : "";
      this.db.prepare(`UPDATE sessions SET offset = @offset, models = @models${setName} WHERE key = @key`).run({
        offset: batch.to,
        models: ` ${[...known].join(" ")} `,
        key,
        ...(batch.name !== undefined ? { name: batch.name } : {}),
      });
      return true;
    })();
  }

  async remove(userId: string, sessionId: string): Promise<void> {
    this.db.transaction(() => this.removeNow(userId, sessionId))();
  }

  async clear(userId?: string): Promise<void> {
    this.db.transaction(() => {
      const users =
        userId === undefined
          ? (this.db.prepare("SELECT DISTINCT user_id FROM sessions").all() as { user_id: string }[]).map(
              (r) => r.user_id,
            )
          : [userId];
      for (const user of users) {
        const ids = this.db.prepare("SELECT session_id FROM sessions WHERE user_id = ?").all(user) as {
          session_id: string;
        }[];
        for (const { session_id } of ids) this.removeNow(user, session_id);
        // The user's table goes too (its vocabulary and statistics with it).
        const table = this.tenancy === "table-per-user" ? this.tableOf(user) : undefined;
        if (table !== undefined) {
          this.db.exec(`DROP TABLE ${table}`);
          this.db.prepare("DELETE FROM users WHERE user_id = ?").run(user);
        }
      }
    })();
  }

  async files(userId: string, sessionId: string, limit: number): Promise<FileTouched[]> {
    // The first entry (the lowest id: entries are inserted in order) that named each path.
    return this.db
      .prepare(
        // SQLite takes a bare column (entry_id) from the row MIN() picked.
        `SELECT f.path AS path, e.entry_id AS entryId, MIN(e.id) AS first
         FROM sessions s JOIN entries e ON e.session_key = s.key JOIN files f ON f.entry = e.id
         WHERE s.user_id = ? AND s.session_id = ? GROUP BY f.path ORDER BY first LIMIT ?`,
      )
      .all(userId, sessionId, Math.min(limit, MAX_FILES_LISTED))
      .map((row) => {
        const { path, entryId } = row as FileTouched;
        return { path, entryId };
      });
  }

  /** @throws SearchTimeout once past `options.deadline` (its statements stop there) */
  async search(userId: string, query: SearchQuery, options: SearchOptions): Promise<SearchPage> {
    this.deadline = options.deadline ?? Number.POSITIVE_INFINITY;
    this.rowsSeen = 0;
    try {
      return await this.searchNow(userId, query, options);
    } catch (error) {
      // The function's throw comes back wrapped by some drivers: the deadline says what it was.
      if (Date.now() > this.deadline && !(error instanceof QueryError)) {
        throw new SearchTimeout("the search passed its deadline");
      }
      throw error;
    } finally {
      this.deadline = Number.POSITIVE_INFINITY;
    }
  }

  /**
   * Refuses a `file:` pattern dearer than {@link SearchBounds.fileWork} for this user's paths,
   * before it runs (counting the paths reads an index, not the paths' text).
   */
  private chargeFile(userId: string, file: string): void {
    const stars = (file.match(/\*/gu) ?? []).length;
    const perPath = Array.from(file).length * (stars + 1) * filePatterns(file).length;
    if (perPath <= 1) return;
    const paths = (
      this.tenancy === "file-per-user"
        ? this.db.prepare("SELECT count(*) AS n FROM files").get()
        : this.db
            .prepare(
              `SELECT count(*) AS n FROM sessions s JOIN entries e ON e.session_key = s.key
               JOIN files f ON f.entry = e.id WHERE s.user_id = ? AND ${DEADLINE_FN}(e.id)`,
            )
            .get(userId)
    ) as { n: number };
    if (paths.n * perPath > (this.bounds.fileWork ?? DEFAULT_FILE_WORK)) {
      throw new QueryError(
        `file: "${file.length > 40 ? `${file.slice(0, 40)}…` : file}" is too costly to match against the ${paths.n} paths of your sessions: use a shorter pattern, with fewer *`,
      );
    }
  }

  private async searchNow(userId: string, query: SearchQuery, options: SearchOptions): Promise<SearchPage> {
    const skip = decodeCursor(options.cursor);
    const table = this.tableOf(userId);
    if (table === undefined) return { sessions: [] }; // no session indexed yet
    if (query.file !== undefined) this.chargeFile(userId, query.file);
    const match = ftsMatch(query, (prefix) => this.completions(table, prefix));
    const where = ["s.user_id = @user", `${DEADLINE_FN}(e.id)`];
    const params: Record<string, unknown> = { user: userId, scan: MAX_SCAN };
    if (match !== undefined) {
      where.push(`${table} MATCH @match`);
      params.match = match;
    }
    if (query.role) {
      // The role is the kind's (see ROLE_OF): not stored per entry.
      where.push(`e.kind IN (${KINDS_OF[query.role].map((k) => `'${k}'`).join(", ")})`);
    }
    if (query.since !== undefined) {
      where.push("e.time >= @since");
      params.since = query.since;
    }
    if (query.before !== undefined) {
      where.push("e.time < @before");
      params.before = query.before;
    }
    if (query.cwd !== undefined) {
      where.push("instr(lower(s.cwd), lower(@cwd)) > 0");
      params.cwd = query.cwd;
    }
    if (query.model !== undefined) {
      where.push("instr(lower(s.models), lower(@model)) > 0");
      params.model = query.model;
    }
    if (query.label !== undefined) {
      // The labelled entries themselves (not the label's own document: its text is the filter's).
      where.push(
        "e.kind <> 'label' AND EXISTS (SELECT 1 FROM labels l WHERE l.session_key = s.key AND l.entry_id = e.entry_id AND lower(l.label) = lower(@label))",
      );
      params.label = query.label;
    }
    if (query.file !== undefined) {
      const patterns = filePatterns(query.file);
      const globs = patterns.map((_, i) => `f.path GLOB @file${i}`).join(" OR ");
      where.push(`EXISTS (SELECT 1 FROM files f WHERE f.entry = e.id AND ${DEADLINE_FN}(f.entry) AND (${globs}))`);
      patterns.forEach((pattern, i) => {
        params[`file${i}`] = pattern;
      });
    }
    const columns =
      "s.session_id, e.entry_id, e.kind, e.time, e.line_offset, e.line_length, s.generation, s.name, s.cwd";
    const rows = (
      match !== undefined
        ? // Newest matches first (FTS5 walks its doclists backwards and stops at the limit), then ranked.
          this.db.prepare(
            `WITH hits AS (
               SELECT ${table}.rowid AS id, bm25(${table}) AS score FROM ${table} JOIN entries e ON e.id = ${table}.rowid
               JOIN sessions s ON s.key = e.session_key
               WHERE ${where.join(" AND ")} ORDER BY ${table}.rowid DESC LIMIT @ranked)
             SELECT ${columns} FROM hits JOIN entries e ON e.id = hits.id JOIN sessions s ON s.key = e.session_key
             ORDER BY hits.score, e.time DESC, e.id DESC LIMIT @scan`,
          )
        : this.db.prepare(
            `SELECT ${columns} FROM entries e JOIN sessions s ON s.key = e.session_key
             WHERE ${where.join(" AND ")} ORDER BY e.time DESC, e.id DESC LIMIT @scan`,
          )
    ).all(match !== undefined ? { ...params, ranked: this.bounds.rankedEntries } : params) as HitRow[];
    const groups = new Map<string, SessionHit>();
    const located = new Map<EntryHit, HitRow>();
    for (const row of rows) {
      let group = groups.get(row.session_id);
      if (!group) {
        group = { sessionId: row.session_id, entries: [] };
        if (row.name) group.name = row.name;
        if (row.cwd) group.cwd = row.cwd;
        groups.set(row.session_id, group);
      }
      if (group.entries.length < ENTRIES_PER_SESSION) {
        const hit: EntryHit = { entryId: row.entry_id, kind: row.kind, time: row.time, snippet: [] };
        group.entries.push(hit);
        located.set(hit, row);
      }
    }
    const all = [...groups.values()];
    const sessions = all.slice(skip, skip + options.limit);
    await Promise.all(sessions.map((session) => this.cutSnippets(userId, session, located, query)));
    const next = skip + options.limit;
    return next < all.length && next <= MAX_SCAN ? { sessions, cursor: encodeCursor(next) } : { sessions };
  }

  /**
   * The entries a query ranks (the newest matches of its text, before its filters), with the
   * tables it reads a row of, by entry id, for each (its length for bm25, its facts): what a
   * reader of a sparse copy of the index fetches before the query runs (`aws/replica.ts`). No
   * ids for a query of filters only.
   */
  rankedIds(userId: string, query: SearchQuery): { ids: number[]; tables: string[] } {
    const table = this.tableOf(userId);
    const match = table === undefined ? undefined : ftsMatch(query, (prefix) => this.completions(table, prefix));
    if (match === undefined) return { ids: [], tables: [] };
    const rows = this.db
      .prepare(`SELECT rowid AS id FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid DESC LIMIT ?`)
      .all(match, this.bounds.rankedEntries) as { id: number }[];
    return { ids: rows.map((row) => row.id), tables: [`${table}_docsize`, "entries"] };
  }

  /** The keys of the sessions of entries `ids` (see {@link rankedIds}). */
  sessionKeysOf(ids: readonly number[]): number[] {
    return (
      this.db
        .prepare("SELECT DISTINCT session_key AS key FROM entries WHERE id IN (SELECT value FROM json_each(?))")
        .all(JSON.stringify(ids)) as { key: number }[]
    ).map((row) => row.key);
  }

  /**
   * The most common words starting with `prefix` (at most {@link SearchBounds.prefixWords}), or
   * `undefined` (search the prefix as FTS5 does) when it is not one word or no word starts with
   * it as folded here.
   */
  private completions(table: string, prefix: string): string[] | undefined {
    const folded = foldedWord(prefix);
    if (folded === undefined || this.bounds.prefixWords === Number.POSITIVE_INFINITY) return undefined;
    if (!this.vocabularies.has(table)) {
      this.db.exec(vocabulary(table));
      this.vocabularies.add(table);
    }
    const words = (
      this.db
        .prepare(`SELECT term FROM ${table}_words WHERE term >= ? AND term < ? ORDER BY doc DESC LIMIT ?`)
        .all(folded, `${folded}\u{10FFFF}`, this.bounds.prefixWords) as { term: string }[]
    ).map((row) => row.term);
    return words.length > 0 ? words : undefined;
  }

  /** Reads the hits' lines back and cuts their snippets (none when the bytes are gone or moved). */
  private async cutSnippets(userId: string, session: SessionHit, located: Map<EntryHit, HitRow>, query: SearchQuery) {
    const hits = session.entries.filter((hit) => located.get(hit)?.line_offset != null);
    if (hits.length === 0) return;
    const rows = hits.map((hit) => located.get(hit) as HitRow);
    const ranges = rows.map((row) => ({ offset: row.line_offset as number, length: row.line_length as number }));
    const lines = await this.lines(userId, session.sessionId, rows[0].generation, ranges);
    hits.forEach((hit, i) => {
      const line = lines[i];
      if (!line) return;
      if (line.length > MAX_LINE_BYTES) {
        // Indexed as its text (documents.ts): cut from its start, never parsed whole here.
        hit.snippet = snippetOf(new TextDecoder().decode(line.subarray(0, 4 * MAX_DOCUMENT_CHARS)), query.terms);
        return;
      }
      const nl = new Uint8Array(line.length + 1);
      nl.set(line);
      nl[line.length] = 0x0a;
      const at = { userId, sessionId: session.sessionId, generation: rows[i].generation, from: ranges[i].offset };
      const doc = batchOf(nl, at).documents.find((d) => d.kind === hit.kind);
      if (doc) hit.snippet = snippetOf(doc.text, query.terms);
    });
  }
}
