/**
 * The range of an insights report: the days a request asks for (`from`/`to`, or `since`), and a
 * long range fitted to the days that have usage. Apart from the report's own module so that the
 * routes that read a request's range do not load the report's code.
 */
import type { UsageInRange } from "@pisync/store";
import type { InsightsPageReport } from "@pisync/viewer/library";
import { BadRequest } from "./errors.js";

/**
 * Days of one report, inclusive (`YYYY-MM-DD`, UTC). `fit`: the range is `since=all` or longer
 * than {@link FIT_AFTER_DAYS}: the report narrows it to the days that have usage (see {@link fitRange}).
 */
export type InsightsRange = Pick<InsightsPageReport, "from" | "to"> & { fit?: boolean };

/**
 * The longest span a report answers (ten years): a longer range is narrowed to the days that
 * have usage, then to its last ten years. The work of a report is its stored days (read by
 * range) and one entry per day of its span, so the span, not the asked range, is what is bounded.
 */
export const MAX_INSIGHTS_DAYS = 3660;
/** A range longer than this (a year) is fitted to the days that have usage. */
export const FIT_AFTER_DAYS = 366;
/** `since=all` starts here: before any usage a store can hold (its uncounted day sorts before it). */
const FIRST_DAY = "0001-01-01";
const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A `--since` value: `30d`, `12w`, or a day; the day it names, as of `now`. */
export function sinceDay(since: string, now: Date): string {
  const relative = /^(\d{1,4})([dw])$/.exec(since);
  if (relative) {
    const days = Number(relative[1]) * (relative[2] === "w" ? 7 : 1);
    return new Date(now.getTime() - Math.max(0, days - 1) * DAY_MS).toISOString().slice(0, 10);
  }
  if (DAY.test(since) && !Number.isNaN(Date.parse(since))) return since;
  throw new BadRequest("since must be all, a number of days or weeks (30d, 12w) or a day (2026-01-31)", "bad_request");
}

/**
 * The range of a request: `from`/`to` days, or `since` (`all`: from the first day with usage),
 * defaulting to the last 30 days to `now`. A range longer than {@link FIT_AFTER_DAYS} is marked
 * to be fitted to the days that have usage.
 * @throws BadRequest for a malformed day or a reversed range
 */
export function insightsRange(query: { from?: string; to?: string; since?: string }, now: Date): InsightsRange {
  const to = query.to ?? now.toISOString().slice(0, 10);
  const all = query.from === undefined && query.since === "all";
  const from = query.from ?? (all ? FIRST_DAY : sinceDay(query.since ?? "30d", now));
  for (const [name, value] of [
    ["from", from],
    ["to", to],
  ] as const) {
    if (!DAY.test(value) || Number.isNaN(Date.parse(value))) {
      throw new BadRequest(`${name} must be a day, like 2026-01-31`, "bad_request");
    }
  }
  const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
  if (days < 1) throw new BadRequest("from must not be after to", "bad_request");
  return all || days > FIT_AFTER_DAYS ? { from, to, fit: true } : { from, to };
}

/**
 * A long range narrowed to what it can show: from its first day with usage (or its end, when
 * none has any), to its end (or the last day with usage, when the end is over a year past it);
 * then to its last {@link MAX_INSIGHTS_DAYS} days.
 */
export function fitRange(range: InsightsRange, usage: UsageInRange): InsightsRange {
  let first: string | undefined;
  let last: string | undefined;
  for (const session of usage.sessions) {
    for (const [day] of [...session.rows, ...session.tools]) {
      if (day < range.from || day > range.to) continue;
      if (first === undefined || day < first) first = day;
      if (last === undefined || day > last) last = day;
    }
  }
  const from = first ?? range.to;
  const span = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / DAY_MS + 1;
  // An end more than a year past the last usage (a far future `to`) comes back to it.
  const to = last && span(last, range.to) > FIT_AFTER_DAYS ? last : range.to;
  if (span(from, to) <= MAX_INSIGHTS_DAYS) return { from, to };
  return { from: new Date(Date.parse(to) - (MAX_INSIGHTS_DAYS - 1) * DAY_MS).toISOString().slice(0, 10), to };
}
