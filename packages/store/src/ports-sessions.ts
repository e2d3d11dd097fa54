/**
 * The sessions port: each session's head (its commit point), the tree index pages and archived
 * generations a commit writes, and the store's own id. A commit also keeps the session's card and
 * its usage by day, which the cards and usage ports read.
 * Errors follow the contract in `ports.ts`.
 */
import type { LineRecord, Problem } from "@pisync/format";

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

/** Session heads and what their commits write: DynamoDB, or SQLite. */
export interface SessionStore {
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
}
