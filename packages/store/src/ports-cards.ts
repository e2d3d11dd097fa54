/**
 * The library's cards port: each session's small card, kept beside its head by every commit, read
 * as a whole list (reports) or a page at a time in the list's order, narrowed by a filter.
 * Errors follow the contract in `ports.ts`.
 */
import type { UsageRollup } from "./ports-sessions.js";

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

/** What the list may be narrowed to; every field is optional and they combine (and). */
export interface CardFilter {
  /** The session's folder is this one, or inside it. */
  cwd?: string;
  /** One of the models the session used (`provider/model`, or the model alone). */
  model?: string;
  /** Sessions whose last entry is on or after this day (`YYYY-MM-DD`, UTC). */
  from?: string;
  /** Sessions whose last entry is on or before this day (`YYYY-MM-DD`, UTC). */
  to?: string;
}

/** What a page of cards is asked for. */
export interface CardPageRequest {
  /** Cards in the page at most (1 to {@link LIST_SCAN_BUDGET}). */
  limit: number;
  /** A cursor a previous page of this user's list gave. */
  cursor?: string;
  filter?: CardFilter;
}

/** One page of cards; `cursor` is absent when nothing is left after it. */
export interface CardPage {
  cards: SessionCard[];
  cursor?: string;
}

/** The library's cards of a user's sessions. */
export interface CardStore {
  /** Every session of a user as a {@link SessionCard}, in no particular order (reads them all: for reports, not lists). */
  listCards(userId: string): Promise<SessionCard[]>;
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
}
