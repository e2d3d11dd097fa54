/**
 * The search port: an index of a user's sessions, derived from their stored bytes (it can always
 * be rebuilt from them). Adapters: `embedded` (SQLite FTS5).
 *
 * Error contract, for every method:
 * - every call is scoped to one user id: another user's sessions are never read, changed or
 *   answered, and look exactly like missing ones;
 * - a query is given parsed ({@link SearchQuery}); a malformed cursor is a `QueryError`;
 * - `apply` with a `from` that is not the session's indexed offset (same generation) changes
 *   nothing and returns false: the caller reads the state again and catches up;
 * - anything else (disk, network) propagates as it is: the caller answers 5xx.
 */
import type { Role, SearchQuery } from "./query.js";

/** What an indexed document is: its kind says which part of an entry it holds. */
export type DocumentKind =
  | "user"
  | "assistant"
  | "thinking"
  | "tool_call"
  | "tool_result"
  | "bash"
  | "summary"
  | "name"
  | "label";

/** One searchable piece of an entry. */
export interface SearchDocument {
  entryId: string;
  kind: DocumentKind;
  role: Role;
  text: string;
  /** Epoch milliseconds of the entry. */
  time: number;
  /** The model that wrote it (assistant entries). */
  model?: string;
  /** Where its line is in the generation (bytes): snippets are cut from the stored line, not kept in the index. */
  at?: LineAt;
  /** The paths its tool calls or command name, normalised and bounded (files.ts), for `file:`. */
  files?: string[];
}

/** A file a session touched, with the first entry that touched it. */
export interface FileTouched {
  path: string;
  entryId: string;
}

/** A line's byte range in a generation. */
export interface LineAt {
  offset: number;
  length: number;
}

/**
 * Reads lines of a session's generation from where the bytes are stored, for snippets. Answers
 * one item per range, `undefined` for all when the session or generation is gone.
 */
export type LineSource = (
  userId: string,
  sessionId: string,
  generation: number,
  ranges: readonly LineAt[],
) => Promise<Array<Uint8Array | undefined>>;

/** Documents of bytes [from, to) of a generation of a session, and what they change of the session. */
export interface IndexBatch {
  userId: string;
  sessionId: string;
  generation: number;
  /** 0 replaces everything indexed for the session; otherwise must equal the indexed offset. */
  from: number;
  to: number;
  documents: SearchDocument[];
  /** From the header, when these bytes hold it. */
  cwd?: string;
  /** The session name when these bytes set it (`null` clears it). */
  name?: string | null;
  /** Labels set (a string) or cleared (`null`) by these bytes, by target entry id. */
  labels: Record<string, string | null>;
}

/** Complete lines of a session's generation, from byte `from`: what {@link IndexBatch}es are read from. */
export interface LinesToIndex {
  bytes: Uint8Array;
  at: { userId: string; sessionId: string; generation: number; from: number };
}

/** How far a session is indexed. */
export interface IndexState {
  generation: number;
  offset: number;
}

/** One part of a snippet: matched text is `hit`. Plain text: escape it where it is shown. */
export interface SnippetPart {
  text: string;
  hit: boolean;
}

/** A matching entry. */
export interface EntryHit {
  entryId: string;
  kind: DocumentKind;
  time: number;
  snippet: SnippetPart[];
}

/** A matching session, with its best entries (best first). */
export interface SessionHit {
  sessionId: string;
  name?: string;
  cwd?: string;
  entries: EntryHit[];
}

/** One page of results: sessions ranked by their best entry (bm25), newest first on ties. */
export interface SearchPage {
  sessions: SessionHit[];
  /** Pass back for the next page; absent on the last one. */
  cursor?: string;
}

/** A page of a search: how many sessions, after which cursor, and when the search must stop. */
export interface SearchOptions {
  limit: number;
  cursor?: string;
  /**
   * Epoch ms: an adapter that runs statements checks it as rows go by and stops there with
   * SearchTimeout (a search thread's time limit ends the work, not only the answer).
   */
  deadline?: number;
}

/** The search index of every user's sessions. */
export interface SearchIndex {
  /** How far a session is indexed, or undefined when it is not. */
  state(userId: string, sessionId: string): Promise<IndexState | undefined>;
  /**
   * Optional: how far each of a user's sessions is indexed, in one read (an adapter whose every
   * read first checks a remote pointer has it); callers fall back to {@link SearchIndex.state}.
   */
  states?(userId: string, sessionIds: readonly string[]): Promise<Array<IndexState | undefined>>;
  /** Every session of a user the index holds, with its state. */
  sessions(userId: string): Promise<Array<IndexState & { sessionId: string }>>;
  /** Every user the index holds a session of. */
  users(): Promise<string[]>;
  /** Adds a batch (see {@link IndexBatch}); false when `from` is not where the session stands. */
  apply(batch: IndexBatch): Promise<boolean>;
  /**
   * Adds batches in order, all in one transaction (one commit for many sessions); answers, per
   * batch, what {@link SearchIndex.apply} would have.
   */
  applyAll(batches: readonly IndexBatch[]): Promise<boolean[]>;
  /**
   * Optional: reads each item's lines into a batch (`batchOf`) and adds them as
   * {@link SearchIndex.applyAll} does. An adapter that indexes off the caller's thread has it
   * (the reading is most of the work); callers fall back to `batchOf` and `applyAll`.
   */
  applyLines?(items: readonly LinesToIndex[]): Promise<boolean[]>;
  /** Removes a session's documents; nothing when it has none. */
  remove(userId: string, sessionId: string): Promise<void>;
  /** Removes every document of a user, or of everyone. */
  clear(userId?: string): Promise<void>;
  /**
   * The files a session touched, in the order first touched, each with the first entry that
   * touched it: at most `limit`; none for a session the index does not hold for this user.
   */
  files(userId: string, sessionId: string, limit: number): Promise<FileTouched[]>;
  /**
   * Runs a query. @throws QueryError for a malformed cursor or a query too costly for the
   * library; SearchTimeout once past `options.deadline`
   */
  search(userId: string, query: SearchQuery, options: SearchOptions): Promise<SearchPage>;
  /**
   * Optional: work the index leaves off requests' paths (the AWS adapter folds logs into new
   * bases), as much as fits before `deadline` (epoch ms); with `atLeastOne`, the first piece
   * whatever it takes (a pass's first work, its whole budget ahead). For scheduled passes only.
   * @returns the pieces done
   */
  upkeep?(deadline: number, options?: { atLeastOne?: boolean }): Promise<number>;
}
