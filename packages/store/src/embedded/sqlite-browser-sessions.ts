/** Signed-in browsers in the metadata file (see {@link BrowserSessionStore}): `browser_sessions`, by hash. */

import { decodeListCursor, encodeListCursor } from "../listing.js";
import type { BrowserSessionRecord, BrowserSessionStore } from "../ports-browser-sessions.js";
import type { SqliteDatabase } from "./sqlite.js";

/** The browser sessions port on the metadata file. */
export class SqliteBrowserSessionStore implements BrowserSessionStore {
  constructor(private readonly db: SqliteDatabase) {}

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
