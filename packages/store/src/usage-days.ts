/**
 * A user's usage by day, kept by each commit beside the heads, so that a report over a range
 * reads the days of the range (a few hundred small items at most) instead of every session's
 * card. Each day holds, per session, that session's usage rows and tool rows of the day (its
 * "day usage"); both adapters store it, and both derive it from the head with these functions.
 */
import type { SessionHead, SessionSummary, ToolRow, UsageRow } from "./ports-sessions.js";
import type { SessionUsage, UsageInRange } from "./ports-usage.js";

export type { SessionUsage, UsageInRange };

/** The day a session without a usage rollup (a head from before rollups were kept) is filed under. */
export const UNCOUNTED_DAY = "0000-00-00";

/**
 * One session's usage on one day, as stored (an array: a year of them is read by one report):
 * its folder (null when none), its rows without their day (`[bucket, device, input, output,
 * cacheRead, cacheWrite, cost, ms, turns]`) and its tool rows without their day (`[tool, calls,
 * ms]`). A session filed under {@link UNCOUNTED_DAY} has none.
 */
export type DayUsage = [
  cwd: string | null,
  rows: Array<UsageRow extends [string, ...infer Rest] ? Rest : never>,
  tools: Array<ToolRow extends [string, ...infer Rest] ? Rest : never>,
];

/**
 * A session's day usages, by day, as JSON (the form both stores keep, and compare): every day of
 * its rollup, or {@link UNCOUNTED_DAY} alone for a head with entries and no rollup.
 */
export function dayUsagesOf(summary: SessionSummary | undefined): Map<string, string> {
  const days = new Map<string, DayUsage>();
  if (!summary) return new Map();
  if (!summary.usage) {
    return summary.entries > 0 ? new Map([[UNCOUNTED_DAY, JSON.stringify([null, [], []])]]) : new Map();
  }
  const dayOf = (day: string) => {
    let usage = days.get(day);
    if (!usage) {
      usage = [summary.cwd ?? null, [], []];
      days.set(day, usage);
    }
    return usage;
  };
  for (const [day, ...rest] of summary.usage.rows) dayOf(day)[1].push(rest);
  for (const [day, ...rest] of summary.usage.tools) dayOf(day)[2].push(rest);
  return new Map([...days].map(([day, usage]) => [day, JSON.stringify(usage)]));
}

/**
 * The days whose usage differs between two versions of a session's head (either may be absent:
 * a new or a deleted session): the days a commit must write again.
 */
export function changedUsageDays(before: SessionHead | undefined, after: SessionHead | undefined): string[] {
  const old = dayUsagesOf(before?.summary);
  const now = dayUsagesOf(after?.summary);
  const days = new Set<string>();
  for (const [day, usage] of now) if (old.get(day) !== usage) days.add(day);
  for (const day of old.keys()) if (!now.has(day)) days.add(day);
  return [...days].sort();
}

/**
 * Adds a session's day usage to the sessions of a range (by session id), giving its rows
 * their day back; a session filed under {@link UNCOUNTED_DAY} counts as uncounted instead.
 */
export class UsageCollector {
  private readonly sessions = new Map<string, SessionUsage>();
  private readonly uncounted = new Set<string>();

  add(day: string, sessionId: string, [cwd, rows, tools]: DayUsage): void {
    if (day === UNCOUNTED_DAY) {
      this.uncounted.add(sessionId);
      return;
    }
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = { sessionId, ...(cwd === null ? {} : { cwd }), rows: [], tools: [] };
      this.sessions.set(sessionId, session);
    }
    for (const row of rows) session.rows.push([day, ...row]);
    for (const row of tools) session.tools.push([day, ...row]);
  }

  /** Adds a session's days of a range (and its {@link UNCOUNTED_DAY}) from its head's summary, as a store files them. */
  addHead(sessionId: string, summary: SessionSummary | undefined, range: { from: string; to: string }): void {
    for (const [day, usage] of dayUsagesOf(summary)) {
      if (day === UNCOUNTED_DAY || (day >= range.from && day <= range.to)) this.add(day, sessionId, JSON.parse(usage));
    }
  }

  /** Forgets what was added of a session (its days are about to be added from elsewhere). */
  drop(sessionId: string): void {
    this.sessions.delete(sessionId);
    this.uncounted.delete(sessionId);
  }

  result(): UsageInRange {
    return { sessions: [...this.sessions.values()], uncounted: this.uncounted.size };
  }
}
