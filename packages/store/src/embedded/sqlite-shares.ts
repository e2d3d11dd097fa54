/**
 * Share links in the metadata file (see {@link ShareStore}): `shares`, by id; views and downloads
 * are columns of their own, so a rewrite of the record never loses a count.
 */

import { decodeListCursor, encodeListCursor } from "../listing.js";
import type { ShareRecord, ShareStore } from "../ports-shares.js";
import type { SqliteDatabase } from "./sqlite.js";

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

/** A share's record without its counters (they live in their own columns). */
function withoutViews(share: ShareRecord): ShareRecord {
  const { views: _views, lastViewedAt: _last, downloads: _downloads, ...rest } = share;
  return rest;
}

/** Revokes (at `revokedAt`) a user's shares of a session not revoked yet, in the caller's transaction. */
export function revokeSessionShares(db: SqliteDatabase, userId: string, sessionId: string, revokedAt: string): void {
  const shares = db.prepare("SELECT data FROM shares WHERE user_id = ?").all(userId) as { data: string }[];
  const revoke = db.prepare("UPDATE shares SET data = ? WHERE id = ?");
  for (const row of shares) {
    const share = JSON.parse(row.data) as ShareRecord;
    if (share.sessionId !== sessionId || share.revokedAt) continue;
    revoke.run(JSON.stringify({ ...share, revokedAt }), share.id);
  }
}

/** The shares port on the metadata file. */
export class SqliteShareStore implements ShareStore {
  constructor(private readonly db: SqliteDatabase) {}

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
}
