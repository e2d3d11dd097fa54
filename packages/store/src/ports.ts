/**
 * The storage ports. Domain code (packages/core) talks to these interfaces only: the blob port
 * here, and the metadata port, one narrow port per record family (`ports-*.ts`) whose intersection
 * is {@link MetaStore}. Adapters implement them on S3 + DynamoDB (aws/) and on files + SQLite
 * (embedded/), one file per port; one contract suite per port (test/contract*.ts) holds every
 * adapter to the same behaviour.
 *
 * Error contract, for every method of every port:
 * - a missing object or item is `NotFoundError` (blobs) or `undefined` (metadata), never a
 *   vendor error;
 * - a commit whose expected revision is not the stored one is `RevisionConflictError`,
 *   carrying the stored head so the caller needs no second read;
 * - a store that cannot be reached, times out or throttles (after the client's own bounded
 *   retries) is `StorageUnavailableError`; a full disk or quota is `StorageFullError` (nothing
 *   of that write was kept);
 * - anything else (permissions, a bug) propagates as it is: the caller answers 500.
 * A commit that fails with anything but `RevisionConflictError` may still have been applied
 * (its answer was lost): the caller reads the head to find out. `RevisionConflictError` too may
 * follow an applied commit (a retry of it met its own write): its stored head then names what
 * the commit wrote.
 */
import type { BrowserSessionStore } from "./ports-browser-sessions.js";
import type { CardStore } from "./ports-cards.js";
import type { TokenStore } from "./ports-credentials.js";
import type { SessionStore } from "./ports-sessions.js";
import type { ShareStore } from "./ports-shares.js";
import type { SignInStore } from "./ports-sign-in.js";
import type { TeamStore } from "./ports-teams.js";
import type { UsageStore } from "./ports-usage.js";

export type * from "./ports-browser-sessions.js";
export type * from "./ports-cards.js";
export type * from "./ports-credentials.js";
export type * from "./ports-sessions.js";
export type * from "./ports-shares.js";
export type * from "./ports-sign-in.js";
export type * from "./ports-usage.js";

/** One stored object, as a listing gives it (no read of its bytes). */
export interface ObjectInfo {
  key: string;
  /** Bytes. */
  size: number;
  /** When it was last written (S3's `LastModified`, a file's mtime): how old an unreferenced object is. */
  modifiedAt: Date;
}

/** Raw bytes: S3 objects, or files. Keys are made by the domain from validated ids. */
export interface BlobStore {
  /** Writes an object whole (replacing any object with that key). */
  put(key: string, body: Uint8Array): Promise<void>;
  /** Reads an object, or bytes [start, end) of it. @throws NotFoundError */
  get(key: string, range?: { start: number; end: number }): Promise<Uint8Array>;
  /** Deletes objects; missing ones are ignored. */
  delete(keys: readonly string[]): Promise<void>;
  /** Every key under a prefix. */
  list(prefix: string): Promise<string[]>;
  /** Every object under a prefix with its size and last write, in key order. */
  listObjects(prefix: string): Promise<ObjectInfo[]>;
  /**
   * A URL a client can PUT up to `maxBytes` to, straight into `key` (S3 presigned PUT).
   * `undefined` when the store has no such path: the API then takes the upload itself.
   */
  uploadUrl(key: string, expiresInSeconds: number, maxBytes: number): Promise<string | undefined>;
}

/**
 * Session heads, tree index pages, the library's cards, usage by day, tokens, sign-in links and
 * device codes, browser sessions and shares: DynamoDB, or SQLite. Every family is a port of its
 * own; code that needs one family asks for that port only.
 */
export type MetaStore = SessionStore &
  CardStore &
  UsageStore &
  TokenStore &
  SignInStore &
  BrowserSessionStore &
  ShareStore;

/** Both ports, as the domain receives them. */
export interface Stores {
  blobs: BlobStore;
  meta: MetaStore;
  /** Teams (see `ports-teams.ts`); a server without them has no team routes. */
  teams?: TeamStore;
}
