/**
 * The browser sessions port: signed-in browsers, stored as their cookie secret's hash only.
 * Errors follow the contract in `ports.ts`.
 */

/** A signed-in browser: the cookie's secret is never stored, only its hash. */
export interface BrowserSessionRecord {
  /** SHA-256 of the cookie's secret, hex. */
  hash: string;
  userId: string;
  /** A short public id, to list and revoke the session without its secret. */
  id: string;
  createdAt: string;
  /** When it last authenticated a request (written at most about once a minute). */
  lastUsedAt: string;
  /** A short, printable label of the browser that signed in (from its User-Agent). */
  userAgent: string;
}

/** Signed-in browsers. */
export interface BrowserSessionStore {
  /** Stores a browser session's record (its hash, never the cookie's secret). */
  putBrowserSession(session: BrowserSessionRecord): Promise<void>;
  /** The browser session whose cookie secret hashes to `hash`; `undefined` when none is. */
  findBrowserSession(hash: string): Promise<BrowserSessionRecord | undefined>;
  /** A user's browser sessions, oldest first. */
  listBrowserSessions(userId: string): Promise<BrowserSessionRecord[]>;
  /** A page of a user's browser sessions, oldest first (as {@link listTokenPage}). @throws InvalidCursorError */
  listBrowserSessionPage(
    userId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ sessions: BrowserSessionRecord[]; cursor?: string }>;
  /** Records a browser session's last use; one deleted meanwhile stays deleted (nothing is written). */
  touchBrowserSession(hash: string, lastUsedAt: string): Promise<void>;
  /** @returns whether a browser session with that id existed for that user (and now does not). */
  deleteBrowserSession(userId: string, id: string): Promise<boolean>;
  /** Removes every browser session of a user; @returns how many there were. */
  deleteBrowserSessions(userId: string): Promise<number>;
}
