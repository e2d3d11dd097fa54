/**
 * The storage ports. Domain code (packages/core) talks to these two interfaces only; adapters
 * implement them on S3 + DynamoDB (aws/) and on files + SQLite (embedded/). One contract test
 * suite (test/contract.ts) holds every adapter to the same behaviour.
 *
 * Error contract, for every method of both ports:
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
import type { LineRecord, Problem } from "@pisync/format";
import type { CardPage, CardPageRequest } from "./listing.js";
import type { TeamStore } from "./ports-teams.js";
import type { UsageInRange } from "./usage-days.js";

/** One stored object holding bytes [start, end) of a generation. */
export interface Segment {
  key: string;
  start: number;
  end: number;
  /**
   * The generation offset of the object's first byte, when it holds more than [start, end):
   * after a rename the object that held the title slot serves only the bytes after it (S3
   * objects are immutable; the new slot is an object of its own). Absent: `start`.
   */
  base?: number;
}

/** The state of one generation: a complete copy of the file's bytes as of one rewrite. */
export interface GenerationState {
  generation: number;
  /** Committed bytes: always a whole number of lines. */
  length: number;
  /** Complete lines so far, and pi's count of parsed values so far (header = 0). */
  lines: number;
  values: number;
  segments: Segment[];
  createdAt: string;
  /** Why this generation started, when it replaced another. */
  reason?: string;
  /** Renames (title slot changes) committed in this generation: a rename keeps the length but changes bytes. */
  renames?: number;
  /**
   * Who wrote what: runs of bytes appended by one device, in offset order (see core's
   * `writers.ts`). Absent in generations committed before runs were kept.
   */
  writers?: WriterRun[];
}

/** Bytes from `offset` up to the next run's offset (or the end) were appended by `device` (a token's public id; "" unknown). */
export interface WriterRun {
  offset: number;
  device: string;
}

/**
 * Usage of one day, one accounting bucket (`provider/model`, or `Tools/summaries`: see
 * format's `usageKeyOf`) and one device (the public id of the token that sent the lines):
 * `[day, key, device, input, output, cacheRead, cacheWrite, cost, ms, turns]`. `ms` is the
 * time the model worked (assistant messages), `turns` how many assistant messages there were.
 */
export type UsageRow = [
  day: string,
  key: string,
  device: string,
  input: number,
  output: number,
  cacheRead: number,
  cacheWrite: number,
  cost: number,
  ms: number,
  turns: number,
];

/** Tool calls of one day and one tool: `[day, tool, calls, ms]` (`ms`: the time its results took). */
export type ToolRow = [day: string, tool: string, calls: number, ms: number];

/** A session's usage, by day, bucket, device and tool: kept by each commit (insights read it). */
export interface UsageRollup {
  rows: UsageRow[];
  tools: ToolRow[];
  /** The time of the last entry in file order that had one (the next entry's time is measured from it). */
  lastAt?: string;
  /**
   * The last line (1-based, in the generation) of the entries the file was imported with (its
   * header's `pisyncImported`): their usage is another person's, or already counted, and is left
   * out of the rollup. Absent: nothing was imported.
   */
  importedThrough?: number;
}

/** What the session list and detail show, kept up to date by each commit. */
export interface SessionSummary {
  /** The title shown: the title slot's when it has one, else the latest of the header's `title`, `title_change` and `session_info` names. */
  name?: string;
  /** oh-my-pi's title slot's current title (a rename changes it in place). */
  slotTitle?: string;
  /**
   * The blobs (`blob:sha256:<hex>`, oh-my-pi's images) the session's lines name, first first:
   * a share serves only those. At most a bounded number; `blobRefsCut` when more were named.
   */
  blobRefs?: string[];
  blobRefsCut?: boolean;
  cwd?: string;
  /** The first user message, shortened. */
  firstMessage?: string;
  /** The header's timestamp. */
  startedAt?: string;
  headerVersion?: number;
  /** Whether the file has a header (the first line of the generation). */
  hasHeader: boolean;
  entries: number;
  tokens: number;
  cost: number;
  /** The default leaf: the id of the last entry with an id in file order, or null. */
  leafId: string | null;
  problemCount: number;
  /** The first problems found (at most 20), for the metadata answer. */
  problems: Problem[];
  /** Every `provider/model` the session's assistant messages and model changes name, first first (at most 20). */
  models?: string[];
  /** The latest entry timestamp seen (ISO 8601): when the conversation last moved, not the backup. */
  lastEntryAt?: string;
  /** Usage by day, bucket, device and tool; absent on heads written before it was kept. */
  usage?: UsageRollup;
}

/** One session of one user: the commit point of every change. */
export interface SessionHead {
  userId: string;
  sessionId: string;
  /** Bumped by every commit; commits are conditional on it. */
  revision: number;
  current: GenerationState;
  /** How many generations exist (archived ones + the current one). */
  generations: number;
  summary: SessionSummary;
  createdAt: string;
  updatedAt: string;
}

/** Tree records of a run of lines of a generation, written with the commit that adds them. */
export interface IndexPage {
  generation: number;
  /** Byte range of the lines it covers. */
  start: number;
  end: number;
  records: LineRecord[];
  problems: Problem[];
  /** A short preview of each message-like entry, by line number (the tree shows it). */
  previews?: Record<number, string>;
}

/** A device token, stored as a hash only. */
export interface TokenRecord {
  /** SHA-256 of the token, hex. */
  hash: string;
  userId: string;
  /** A short public id, to list and revoke tokens without their secret. */
  id: string;
  name: string;
  createdAt: string;
  /** When it last authenticated a request (written at most about once a minute). */
  lastUsedAt?: string;
}

/** A one-time sign-in link, stored as a hash only; redeeming it removes it. */
export interface LoginLinkRecord {
  /** SHA-256 of the link's secret, hex. */
  hash: string;
  userId: string;
  /** The same-origin path the browser goes to once signed in. */
  next: string;
  createdAt: string;
  /** After this instant the link signs nobody in (the store may drop it any time after). */
  expiresAt: string;
}

/** Where a device-code sign-in stands: waiting for its person, or decided by them. */
export type DeviceCodeStatus = "pending" | "approved" | "denied";

/**
 * A machine waiting to be signed in from a browser (RFC 8628's device authorization): the
 * person types `userCode` on the library's page; the machine polls with its device code, of
 * which only the SHA-256 is kept. No token exists until the approved code is consumed.
 */
export interface DeviceCodeRecord {
  /** The code a person types, without its dash (8 letters): the record's key. */
  userCode: string;
  /** SHA-256 of the device code (the polling machine's secret), hex. */
  deviceHash: string;
  /** What the token will be called: the machine's host name. */
  name: string;
  createdAt: string;
  /** After this instant the code signs nothing in (the store may drop it any time after). */
  expiresAt: string;
  /** Seconds a poll waits after the previous one (raised by each poll that came too soon). */
  interval: number;
  lastPolledAt?: string;
  status: DeviceCodeStatus;
  /** Who approved or denied it. */
  userId?: string;
}

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

/** A read-only link to a session. */
export interface ShareRecord {
  id: string;
  userId: string;
  sessionId: string;
  /** Pinned to one branch, or live and whole when absent. */
  leafId?: string;
  /**
   * The `createdAt` of the session head the share was made of: a session deleted and uploaded
   * again under the same id is another session, and never revives this share.
   */
  sessionCreatedAt?: string;
  createdAt: string;
  expiresAt: string;
  revokedAt?: string;
  /** Whether credentials are masked in what the share shows. */
  maskSecrets: boolean;
  /** How many times its page was opened (kept by {@link MetaStore.recordShareView}, never by `putShare`). */
  views?: number;
  /** When its page was last opened. No address or anything else of the reader is kept. */
  lastViewedAt?: string;
  /** How many times its file or context was downloaded (kept by {@link MetaStore.recordShareDownload}). */
  downloads?: number;
}

/**
 * A session as the library lists it: small, kept beside the head by every commit, so that a
 * user's whole list (thousands of sessions) is read in one query and filtered in memory.
 */
export interface SessionCard {
  sessionId: string;
  name?: string;
  cwd?: string;
  firstMessage?: string;
  models: string[];
  startedAt?: string;
  /** When the conversation last moved: the latest entry's time, else the last backup. */
  lastAt: string;
  updatedAt: string;
  entries: number;
  bytes: number;
  tokens: number;
  cost: number;
  generation: number;
  generations: number;
  /** The session's usage rollup (see {@link SessionSummary.usage}). */
  usage?: UsageRollup;
}

/** What one commit writes, all or nothing. */
export interface Commit {
  head: SessionHead;
  /** The revision the stored head must have; `null` when the session must not exist yet. */
  expectedRevision: number | null;
  /** Index pages to add (their keys are new). */
  pages?: IndexPage[];
  /** A generation being replaced, kept readable. */
  archive?: GenerationState;
  /**
   * An idempotency token (at most 36 characters), the same for every sending of one commit: a
   * store that takes one (DynamoDB's `ClientRequestToken`) applies the commit once however often
   * it is sent within its window.
   */
  token?: string;
  /**
   * The days whose usage this commit changes (`changedUsageDays`): a store writes the session's
   * usage of those days again (see `usage-days.ts`). Absent, it writes every day of the new head.
   */
  usageDays?: string[];
}

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

/** Session heads, tree index pages, tokens, shares, sign-in links and browser sessions: DynamoDB, or SQLite. */
export interface MetaStore {
  /** Every user that has a session, in no particular order (for passes over the whole store: sweep, search catch-up). */
  users(): Promise<string[]>;
  /** The head of a user's session (its current generation and segments); `undefined` when there is none. */
  getHead(userId: string, sessionId: string): Promise<SessionHead | undefined>;
  /** The commit point (see {@link Commit}). @throws RevisionConflictError */
  commit(commit: Commit): Promise<void>;
  /** A user's sessions, most recently updated first. */
  listHeads(
    userId: string,
    options: { limit: number; cursor?: string },
  ): Promise<{ heads: SessionHead[]; cursor?: string }>;
  /** Every session of a user as a {@link SessionCard}, in no particular order (reads them all: for reports, not lists). */
  listCards(userId: string): Promise<SessionCard[]>;
  /**
   * The usage of a user's sessions on the days `from`..`to` (inclusive, `YYYY-MM-DD`), from the
   * usage by day every commit keeps: a read of those days, never of every session.
   */
  listUsage(userId: string, range: { from: string; to: string }): Promise<UsageInRange>;
  /**
   * A page of a user's session cards (without usage), latest conversation first (`lastAt`, then
   * session id, both descending), narrowed by the request's filter. Read from an index kept by
   * each commit; no call reads more than `LIST_SCAN_BUDGET` cards (a page may come back short,
   * with a cursor, when a filter skips many). @throws InvalidCursorError for a cursor this
   * user's list did not give
   */
  listCardPage(userId: string, request: CardPageRequest): Promise<CardPage>;
  /** The cards (without usage) of these sessions of a user, in no particular order; unknown ones are left out. */
  getCards(userId: string, sessionIds: readonly string[]): Promise<SessionCard[]>;
  /**
   * Adds to the list index every session of the user that is missing from it (heads written
   * before the index was kept), or with `check` only counts them; @returns how many. Reads every
   * head: for maintenance passes. A repair also files the heads' usage by day when a store keeps
   * it apart and has not yet (see `listUsage`).
   */
  fillCardList(userId: string, options?: { check?: boolean }): Promise<number>;
  /** The index pages of one generation, in byte order; from `from` on (pages starting at or after it) when given. */
  getPages(userId: string, sessionId: string, generation: number, from?: number): Promise<IndexPage[]>;
  /** Archived generations, oldest first. */
  getArchived(userId: string, sessionId: string): Promise<GenerationState[]>;
  /**
   * Removes the head, pages and archived generations of a session, and revokes (at `revokedAt`)
   * the user's shares of it that are not revoked yet: the head's removal and the revocations
   * are one commit.
   */
  deleteSession(userId: string, sessionId: string, revokedAt: string): Promise<void>;

  /**
   * The id of the data this store holds: the first `candidate` ever given, kept with the data
   * (so a store started afresh, its data gone, answers another id). Clients key what they
   * confirmed by it: a new id means nothing they confirmed is known to be here.
   */
  serverId(candidate: string): Promise<string>;

  /** Stores a token's record (its hash, never the secret). */
  putToken(token: TokenRecord): Promise<void>;
  /** The token whose SHA-256 is `hash`; `undefined` when none is. */
  findToken(hash: string): Promise<TokenRecord | undefined>;
  /** A user's token records. */
  listTokens(userId: string): Promise<TokenRecord[]>;
  /**
   * A page of a user's tokens, by id (at most `limit`, read from an index: never all of them);
   * `cursor`, from the previous page, is absent on the last. @throws InvalidCursorError for a
   * cursor another user's list gave, or none gave
   */
  listTokenPage(
    userId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ tokens: TokenRecord[]; cursor?: string }>;
  /** @returns whether a token with that id existed for that user. */
  deleteToken(userId: string, id: string): Promise<boolean>;
  /** Renames a user's token `id`; @returns whether that user had it (another user's is left alone). */
  renameToken(userId: string, id: string, name: string): Promise<boolean>;
  /** Records a token's last use; a token deleted meanwhile stays deleted (nothing is written). */
  touchToken(hash: string, lastUsedAt: string): Promise<void>;

  /** Stores a sign-in link's record (its hash, never the secret). */
  putLoginLink(link: LoginLinkRecord): Promise<void>;
  /**
   * Removes the link whose secret hashes to `hash` and returns it, in one atomic step: of any
   * number of concurrent calls for one link, exactly one gets the record (expired or not; the
   * caller checks `expiresAt`), the others `undefined`.
   */
  consumeLoginLink(hash: string): Promise<LoginLinkRecord | undefined>;

  /**
   * Stores a new device code; false (nothing written) when a code with that `userCode` exists
   * and has not expired.
   */
  putDeviceCode(record: DeviceCodeRecord): Promise<boolean>;
  /** The device code with this `userCode` (expired or not: the caller checks); `undefined` when none is. */
  getDeviceCode(userCode: string): Promise<DeviceCodeRecord | undefined>;
  /**
   * Replaces the device code `record.userCode` with `record` if it exists and its stored status
   * is `expected`, in one atomic step; @returns whether it did.
   */
  updateDeviceCode(record: DeviceCodeRecord, expected: DeviceCodeStatus): Promise<boolean>;
  /**
   * Removes the device code `userCode` if its stored status is `expected` and returns it, in one
   * atomic step: of any number of concurrent calls exactly one gets the record.
   */
  consumeDeviceCode(userCode: string, expected: DeviceCodeStatus): Promise<DeviceCodeRecord | undefined>;

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

  /**
   * Writes a share link's record whole (creating it, or recording its revocation); its view count
   * and last view are left as they are.
   */
  putShare(share: ShareRecord): Promise<void>;
  /** A share by its id, whoever owns it (the caller checks the owner); `undefined` when unknown. */
  getShare(id: string): Promise<ShareRecord | undefined>;
  /** A user's share links, revoked ones included. */
  listShares(userId: string): Promise<ShareRecord[]>;
  /** A page of a user's share links, newest first (by `createdAt`, then id). @throws InvalidCursorError */
  listSharePage(
    userId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ shares: ShareRecord[]; cursor?: string }>;
  /** Counts one view of a share's page, at `at`: one atomic update, whoever else counts at once. Unknown ids change nothing. */
  recordShareView(id: string, at: string): Promise<void>;
  /** Counts one download of a share's file or context (`/raw`, `/context`), as atomically. Unknown ids change nothing. */
  recordShareDownload(id: string): Promise<void>;
}

/** Both ports, as the domain receives them. */
export interface Stores {
  blobs: BlobStore;
  meta: MetaStore;
  /** Teams (see `ports-teams.ts`); a server without them has no team routes. */
  teams?: TeamStore;
}
