/**
 * The usage port: a user's usage by day, kept by each commit beside the heads (see `usage-days.ts`),
 * so that a report over a range reads the days of the range.
 * Errors follow the contract in `ports.ts`.
 */
import type { ToolRow, UsageRow } from "./ports-sessions.js";

/** One session's usage over the days of a range: what insights add up (rows keep their day). */
export interface SessionUsage {
  sessionId: string;
  cwd?: string;
  rows: UsageRow[];
  tools: ToolRow[];
}

/** What a report over a range reads: the sessions with usage in it, and how many sessions have no rollup at all. */
export interface UsageInRange {
  sessions: SessionUsage[];
  /** Sessions with entries but no usage rollup (written before rollups were kept): not in the sums. */
  uncounted: number;
}

/** Insights' reads of usage by day. */
export interface UsageStore {
  /**
   * The usage of a user's sessions on the days `from`..`to` (inclusive, `YYYY-MM-DD`), from the
   * usage by day every commit keeps: a read of those days, never of every session.
   */
  listUsage(userId: string, range: { from: string; to: string }): Promise<UsageInRange>;
}
