/**
 * Session heads and what their commits write, in the metadata file (see {@link SessionStore}). A
 * commit is one SQLite transaction whose head update is conditional on the revision, like the
 * DynamoDB adapter's conditional transaction; it writes the head's card keys and usage days (the
 * cards and usage ports') in the same transaction.
 */

import { cardOf } from "../card.js";
import { RevisionConflictError } from "../errors.js";
import type { Commit, GenerationState, IndexPage, SessionHead, SessionStore } from "../ports-sessions.js";
import type { SqliteDatabase } from "./sqlite.js";
import type { SqliteCardStore } from "./sqlite-cards.js";
import { revokeSessionShares } from "./sqlite-shares.js";
import type { SqliteUsageStore } from "./sqlite-usage.js";

/** Index pages read and parsed between two turns of the event loop. */
const PAGES_AT_ONCE = 2;

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

/** The sessions port on the metadata file. */
export class SqliteSessionStore implements SessionStore {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly cards: SqliteCardStore,
    private readonly usage: SqliteUsageStore,
  ) {}

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
      this.cards.writeCardKeys(head.userId, made);
      this.usage.writeUsageDays(head, commit.usageDays);
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
    this.cards.updateCards(head.userId, head.sessionId, cardOf(head));
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
    this.usage.moved(userId);
    this.db.transaction(() => {
      for (const table of ["heads", "card_keys", "usage_days", "pages", "generations"]) {
        this.db.prepare(`DELETE FROM ${table} WHERE user_id = ? AND session_id = ?`).run(userId, sessionId);
      }
      revokeSessionShares(this.db, userId, sessionId, revokedAt);
    })();
    this.cards.updateCards(userId, sessionId, undefined);
  }

  async serverId(candidate: string): Promise<string> {
    this.db.prepare("INSERT OR IGNORE INTO store_facts (name, value) VALUES ('server_id', ?)").run(candidate);
    const row = this.db.prepare("SELECT value FROM store_facts WHERE name = 'server_id'").get() as { value: string };
    return row.value;
  }
}
