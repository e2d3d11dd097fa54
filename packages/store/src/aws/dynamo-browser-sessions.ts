/**
 * Signed-in browsers on the metadata table (see {@link BrowserSessionStore}): one item per
 * browser session, keyed by its cookie secret's hash, listed under its user by creation, kept
 * by TTL a while past its last use.
 */
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { TABLE_SCHEMA } from "../layout.js";
import { decodeListCursor, encodeListCursor } from "../listing.js";
import type { BrowserSessionRecord, BrowserSessionStore } from "../ports-browser-sessions.js";
import { DAY_SECONDS, epochSeconds, key, type MetaTable, usedDataOf } from "./meta-table.js";

/** A browser session unused this long is gone for DynamoDB's TTL too (the core refuses it after 30 days). */
const BROWSER_SESSION_TTL_SECONDS = 31 * DAY_SECONDS;

/** The browser sessions port on the metadata table. */
export class DynamoBrowserSessionStore implements BrowserSessionStore {
  constructor(private readonly table: MetaTable) {}

  async putBrowserSession(session: BrowserSessionRecord): Promise<void> {
    await this.table.putNew({
      ...key(`B#${session.hash}`, "B"),
      gsi1pk: `UB#${session.userId}`,
      gsi1sk: `${session.createdAt}#${session.id}`,
      [TABLE_SCHEMA.ttlAttribute]: epochSeconds(session.lastUsedAt) + BROWSER_SESSION_TTL_SECONDS,
      data: JSON.stringify(session),
    });
  }

  async findBrowserSession(hash: string): Promise<BrowserSessionRecord | undefined> {
    const stored = await this.table.getItem(key(`B#${hash}`, "B"), true);
    return stored ? usedDataOf<BrowserSessionRecord>(stored) : undefined;
  }

  listBrowserSessions(userId: string): Promise<BrowserSessionRecord[]> {
    return this.table.listIndexed(`UB#${userId}`);
  }

  async listBrowserSessionPage(userId: string, page: { limit: number; cursor?: string }) {
    const at = page.cursor ? decodeListCursor(userId, page.cursor) : undefined;
    const { items, more } = await this.table.ascendingPage(`UB#${userId}`, at && `${at[0]}#${at[1]}`, page.limit);
    const sessions = items.map((stored) => usedDataOf<BrowserSessionRecord>(stored));
    const last = sessions[sessions.length - 1];
    return more && last ? { sessions, cursor: encodeListCursor(userId, [last.createdAt, last.id]) } : { sessions };
  }

  touchBrowserSession(hash: string, lastUsedAt: string): Promise<void> {
    return this.table.touch(key(`B#${hash}`, "B"), lastUsedAt, epochSeconds(lastUsedAt) + BROWSER_SESSION_TTL_SECONDS);
  }

  async deleteBrowserSession(userId: string, id: string): Promise<boolean> {
    const session = (await this.listBrowserSessions(userId)).find((s) => s.id === id);
    if (!session) return false;
    // Unconditional: the session was this user's when listed, and a delete the SDK sends again
    // after its answer was lost must not turn a sign-out into "no such session".
    await this.table.client.send(new DeleteCommand({ TableName: this.table.name, Key: key(`B#${session.hash}`, "B") }));
    return true;
  }

  async deleteBrowserSessions(userId: string): Promise<number> {
    const keys = (await this.table.listIndexedItems(`UB#${userId}`)).map((item) =>
      key(item.pk as string, item.sk as string),
    );
    await this.table.deleteKeys(keys, `of ${userId}'s browser sessions`);
    return keys.length;
  }
}
