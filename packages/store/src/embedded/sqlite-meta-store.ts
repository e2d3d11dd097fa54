/**
 * The metadata port in SQLite (`openSqlite`: node:sqlite, or better-sqlite3 on Node 20): durable on one machine, no server. One adapter per
 * record family over the same file (`sqlite-sessions.ts`, `sqlite-cards.ts`, `sqlite-usage.ts`,
 * `sqlite-credentials.ts`, `sqlite-sign-in.ts`, `sqlite-browser-sessions.ts`, `sqlite-shares.ts`;
 * the schema in `sqlite-schema.ts`), composed here into {@link MetaStore}.
 */

import { ComposedMetaStore } from "../composed-meta-store.js";
import type { SqliteDatabase } from "./sqlite.js";
import { SqliteBrowserSessionStore } from "./sqlite-browser-sessions.js";
import { SqliteCardStore } from "./sqlite-cards.js";
import { SqliteTokenStore } from "./sqlite-credentials.js";
import { openMetaDatabase } from "./sqlite-schema.js";
import { SqliteSessionStore } from "./sqlite-sessions.js";
import { SqliteShareStore } from "./sqlite-shares.js";
import { SqliteSignInStore } from "./sqlite-sign-in.js";
import { SqliteUsageStore } from "./sqlite-usage.js";

/**
 * The embedded {@link MetaStore}: heads, the tree index, the library's cards, usage by day, tokens,
 * shares, sign-in links and browser sessions in one SQLite file (WAL). A commit whose head
 * revision moved since it was read throws `RevisionConflictError` with the current head, as the
 * DynamoDB adapter does.
 */
export class SqliteMetaStore extends ComposedMetaStore {
  private readonly db: SqliteDatabase;
  protected readonly sessions: SqliteSessionStore;
  protected readonly cards: SqliteCardStore;
  protected readonly usage: SqliteUsageStore;
  protected readonly tokens: SqliteTokenStore;
  protected readonly signIn: SqliteSignInStore;
  protected readonly browserSessions: SqliteBrowserSessionStore;
  protected readonly shares: SqliteShareStore;

  constructor(path: string) {
    super();
    const { db, keyed, dated } = openMetaDatabase(path);
    this.db = db;
    this.cards = new SqliteCardStore(db);
    this.usage = new SqliteUsageStore(db);
    this.sessions = new SqliteSessionStore(db, this.cards, this.usage);
    this.tokens = new SqliteTokenStore(db);
    this.signIn = new SqliteSignInStore(db);
    this.browserSessions = new SqliteBrowserSessionStore(db);
    this.shares = new SqliteShareStore(db);
    // A file written before the filter index: its heads' keys, once.
    if (!keyed) this.cards.fillCardKeys();
    // And one from before usage was kept by day: every head's days, once.
    if (!dated) this.usage.fillUsageDays();
  }

  close(): void {
    this.db.close();
  }
}
