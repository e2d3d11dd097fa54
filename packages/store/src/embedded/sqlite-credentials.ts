/** Device tokens in the metadata file (see {@link TokenStore}): `tokens`, by hash, listed per user by id. */

import { decodeListCursor, encodeListCursor } from "../listing.js";
import type { TokenRecord, TokenStore } from "../ports-credentials.js";
import type { SqliteDatabase } from "./sqlite.js";

/** The tokens port on the metadata file. */
export class SqliteTokenStore implements TokenStore {
  constructor(private readonly db: SqliteDatabase) {}

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

  async touchToken(hash: string, lastUsedAt: string): Promise<void> {
    this.db.prepare("UPDATE tokens SET data = json_set(data, '$.lastUsedAt', ?) WHERE hash = ?").run(lastUsedAt, hash);
  }
}
