/**
 * The metadata file's schema (`openSqlite`): every family's tables in one SQLite file (WAL), and
 * what an older file gains when it is opened. The family adapters (`sqlite-*.ts`) share the
 * connection opened here.
 */
import { openSqlite, type SqliteDatabase } from "./sqlite.js";

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

/**
 * Opens (or creates) the metadata file, durable (WAL, synchronous=FULL), with its schema and
 * migrations applied; says which indexes it lacked before (to be filled once).
 */
export function openMetaDatabase(path: string): { db: SqliteDatabase; keyed: boolean; dated: boolean } {
  const db = openSqlite(path);
  // WAL + synchronous=FULL: a committed transaction survives a crash or power loss.
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  const has = (table: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(table) !== undefined;
  const keyed = has("card_keys");
  const dated = has("usage_days");
  db.exec(SCHEMA);
  for (const [table, column, type] of ADDED_COLUMNS) {
    const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
    if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
  db.exec(MIGRATIONS);
  return { db, keyed, dated };
}
