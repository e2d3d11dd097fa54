/**
 * Insights: where a user's tokens, money and time went, over every machine's sessions, by day,
 * week, model, project, machine and tool. Each session's usage is rolled up by its commits
 * (see `usage-rollup.ts`) and filed by day beside the heads; a report adds up the days of its
 * range, reading no bytes and no session outside it.
 */
import type { CardStore, SessionCard, TokenStore, UsageInRange, UsageRow, UsageStore } from "@pisync/store";
import type {
  InsightsGroup,
  InsightsPageReport,
  InsightsSums,
  InsightsTool,
  InsightsTopSession,
} from "@pisync/viewer/library";
import { fitRange, type InsightsRange } from "./insights-range.js";

export {
  FIT_AFTER_DAYS,
  fitRange,
  type InsightsRange,
  insightsRange,
  MAX_INSIGHTS_DAYS,
  sinceDay,
} from "./insights-range.js";

/** The shapes of a report are the page's that shows it (one definition, in the viewer). */
export type UsageSums = InsightsSums;
export type UsageGroup = InsightsGroup;
export type ToolGroup = InsightsTool;
export type TopSession = InsightsTopSession;
export type InsightsReport = InsightsPageReport;

/** Groups a breakdown lists (the rest are summed into one "other" group). */
const MAX_GROUPS = 50;
const TOP_SESSIONS = 10;
const DAY_MS = 86_400_000;

/** The Monday of a day's ISO week. */
function weekOf(day: string): string {
  const ms = Date.parse(day);
  const weekday = (new Date(ms).getUTCDay() + 6) % 7;
  return new Date(ms - weekday * DAY_MS).toISOString().slice(0, 10);
}

function emptySums(): UsageSums {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, tokens: 0, cost: 0, ms: 0, turns: 0, sessions: 0 };
}

/** Sums by key, counting each session once per key. */
class Groups {
  private readonly sums = new Map<string, UsageSums & { last: string }>();

  add(key: string, row: UsageRow, sessionId: string): void {
    let sums = this.sums.get(key);
    if (!sums) {
      sums = { ...emptySums(), last: "" };
      this.sums.set(key, sums);
    }
    addRow(sums, row);
    if (sums.last !== sessionId) {
      sums.sessions++;
      sums.last = sessionId;
    }
  }

  /** A key's sums, without the session last counted (not part of the answer). */
  get(key: string): UsageSums | undefined {
    const sums = this.sums.get(key);
    if (!sums) return undefined;
    const { last: _, ...rest } = sums;
    return rest;
  }

  /** Groups most costly first, at most {@link MAX_GROUPS} (the rest summed as "other"). */
  ranked(label: (key: string) => string): UsageGroup[] {
    const all = [...this.sums].map(([key, { last: _, ...sums }]) => ({ key, label: label(key), ...sums }));
    all.sort((a, b) => b.cost - a.cost || b.tokens - a.tokens || (a.key < b.key ? -1 : 1));
    if (all.length <= MAX_GROUPS) return all;
    const other: UsageGroup = { key: "", label: `${all.length - MAX_GROUPS + 1} others`, ...emptySums() };
    for (const group of all.slice(MAX_GROUPS - 1)) {
      for (const field of ["input", "output", "cacheRead", "cacheWrite", "tokens", "cost", "ms", "turns"] as const) {
        other[field] += group[field];
      }
      other.sessions += group.sessions;
    }
    return [...all.slice(0, MAX_GROUPS - 1), other];
  }
}

/** A stored row's number as it adds up: one kept before usage was clamped may be null or Infinity. */
const finite = (n: number) => (typeof n === "number" && Number.isFinite(n) ? n : 0);

function addRow(sums: UsageSums, row: UsageRow): void {
  const input = finite(row[3]);
  const output = finite(row[4]);
  const cacheRead = finite(row[5]);
  const cacheWrite = finite(row[6]);
  sums.input += input;
  sums.output += output;
  sums.cacheRead += cacheRead;
  sums.cacheWrite += cacheWrite;
  sums.tokens += input + output + cacheRead + cacheWrite;
  sums.cost += finite(row[7]);
  sums.ms += finite(row[8]);
  sums.turns += finite(row[9]);
}

/** A card's title: its name, its first message, or its id. */
const titleOf = (card: SessionCard) => card.name || card.firstMessage || card.sessionId;

/** What a report adds up from the days of its range, before devices and sessions are named. */
interface Sums {
  totals: UsageSums;
  byDay: UsageGroup[];
  byWeek: UsageGroup[];
  byModel: UsageGroup[];
  byProject: UsageGroup[];
  devices: Groups;
  byTool: ToolGroup[];
  /** The costliest sessions, without their titles. */
  top: Omit<TopSession, "title">[];
  uncounted: number;
}

/** Insights over a user's sessions, from their usage by day. */
export class Insights {
  /**
   * Sums made of a store's answer, by range: a store that answers the same object again (nothing
   * in the range moved) gets the same sums without adding them up again.
   */
  private readonly sums = new WeakMap<UsageInRange, Map<string, Promise<Sums>>>();
  /** Reports being made, by user and range: the same report asked again meanwhile waits for it. */
  private readonly making = new Map<string, Promise<InsightsReport>>();

  constructor(private readonly meta: CardStore & UsageStore & TokenStore) {}

  /**
   * The report of `range` for `userId`. Devices are named by their tokens (a removed one says
   * so). A year of a large library is added up in slices with other requests let in between.
   */
  report(userId: string, range: InsightsRange): Promise<InsightsReport> {
    const key = `${userId}\u0000${range.from}\u0000${range.to}\u0000${range.fit ? 1 : 0}`;
    const pending = this.making.get(key);
    if (pending) return pending;
    const made = this.make(userId, range).finally(() => this.making.delete(key));
    this.making.set(key, made);
    return made;
  }

  private async make(userId: string, range: InsightsRange): Promise<InsightsReport> {
    // The range's days of usage (kept by every commit), not every session's card.
    const [usage, tokens] = await Promise.all([
      this.meta.listUsage(userId, { from: range.from, to: range.to }),
      this.meta.listTokens(userId),
    ]);
    const used = range.fit ? fitRange(range, usage) : { from: range.from, to: range.to };
    const sums = await this.sumsOf(usage, used);
    const deviceNames = new Map(tokens.map((t) => [t.id, t.name]));
    // Titles of the few sessions shown (a session deleted meanwhile keeps its id).
    const ids = sums.top.map((s) => s.sessionId);
    const cards = new Map((await this.meta.getCards(userId, ids)).map((card) => [card.sessionId, card]));
    const { devices, top, ...rest } = sums;
    return {
      ...used,
      ...rest,
      byDevice: devices.ranked((key) =>
        key === "" ? "(unknown device)" : (deviceNames.get(key) ?? `removed device ${key}`),
      ),
      topSessions: top.map((session) => {
        const card = cards.get(session.sessionId);
        const { sessionId, cwd, cost, tokens, turns } = session;
        return { sessionId, title: card ? titleOf(card) : sessionId, cwd, cost, tokens, turns };
      }),
    };
  }

  /**
   * The report of `range` over a team's sessions: each member's usage of their sessions in the
   * team, added up as one library. Machines are the members' own (none is shown); with
   * `perMember` (owners and admins), `byMember` splits the totals by member. Titles of the
   * costliest sessions go through `title` (the team's masking).
   */
  async teamReport(
    parts: ReadonlyArray<{ userId: string; sessionIds: ReadonlySet<string> }>,
    range: InsightsRange,
    options: { perMember: boolean; title: (card: SessionCard) => Promise<string> },
  ): Promise<InsightsReport & { byMember?: UsageGroup[] }> {
    const owned = await Promise.all(
      parts.map(async ({ userId, sessionIds }) => {
        const usage = await this.meta.listUsage(userId, range);
        const sessions = usage.sessions
          .filter((s) => sessionIds.has(s.sessionId))
          .map((s) => ({ ...s, sessionId: `${userId}:${s.sessionId}` }));
        return { userId, usage: { sessions, uncounted: 0 } satisfies UsageInRange };
      }),
    );
    const whole = await addUp({ sessions: owned.flatMap((o) => o.usage.sessions), uncounted: 0 }, range);
    const { devices: _devices, top, ...rest } = whole;
    const topSessions = await Promise.all(
      top.map(async (session) => {
        const colon = session.sessionId.indexOf(":");
        const [owner, id] = [session.sessionId.slice(0, colon), session.sessionId.slice(colon + 1)];
        const [card] = await this.meta.getCards(owner, [id]);
        const { sessionId, cwd, cost, tokens, turns } = session;
        return { sessionId, title: card ? await options.title(card) : sessionId, cwd, cost, tokens, turns };
      }),
    );
    const byMember = options.perMember
      ? (
          await Promise.all(
            owned.map(async ({ userId, usage }) => ({
              key: userId,
              label: userId,
              ...(
                await addUp(usage, range)
              ).totals,
            })),
          )
        ).sort((a, b) => b.cost - a.cost || b.tokens - a.tokens || (a.key < b.key ? -1 : 1))
      : undefined;
    return { from: range.from, to: range.to, ...rest, byDevice: [], topSessions, ...(byMember ? { byMember } : {}) };
  }

  /** The sums of a store's answer over a range (made once per answer and range). */
  private sumsOf(usage: UsageInRange, range: InsightsRange): Promise<Sums> {
    const key = `${range.from}..${range.to}`;
    const made = this.sums.get(usage)?.get(key);
    if (made) return made;
    const sums = addUp(usage, range);
    const byRange = this.sums.get(usage) ?? new Map<string, Promise<Sums>>();
    byRange.set(key, sums);
    this.sums.set(usage, byRange);
    sums.catch(() => byRange.delete(key));
    return sums;
  }
}

/** Milliseconds of adding up between two turns of the event loop. */
const SLICE_MS = 20;

/**
 * Adds up the sessions' usage in a range: by day, week, model, project, device and tool, a
 * slice of sessions at a time (other requests run in between: a year of 500 sessions is
 * hundreds of thousands of rows).
 */
async function addUp(usage: UsageInRange, range: InsightsRange): Promise<Sums> {
  const days = new Groups();
  const weeks = new Groups();
  const models = new Groups();
  const projects = new Groups();
  const devices = new Groups();
  const tools = new Map<string, ToolGroup & { last: string }>();
  const totals = emptySums();
  const top: Omit<TopSession, "title">[] = [];
  // A year of rows falls on 366 days at most: each day's week is worked out once.
  const weekOfDay = new Map<string, string>();
  const week = (day: string) => weekOfDay.get(day) ?? weekOfDay.set(day, weekOf(day)).get(day) ?? day;
  let slice = performance.now();
  for (const session of usage.sessions) {
    if (performance.now() - slice > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
    const mine = emptySums();
    for (const row of session.rows) {
      const day = row[0];
      if (day < range.from || day > range.to) continue;
      addRow(mine, row);
      days.add(day, row, session.sessionId);
      weeks.add(week(day), row, session.sessionId);
      models.add(row[1], row, session.sessionId);
      projects.add(session.cwd ?? "", row, session.sessionId);
      devices.add(row[2], row, session.sessionId);
    }
    for (const [day, tool, calls, ms] of session.tools) {
      if (day < range.from || day > range.to) continue;
      let group = tools.get(tool);
      if (!group) {
        group = { tool, calls: 0, ms: 0, sessions: 0, last: "" };
        tools.set(tool, group);
      }
      group.calls += calls;
      group.ms += ms;
      if (group.last !== session.sessionId) {
        group.sessions++;
        group.last = session.sessionId;
      }
    }
    if (mine.turns === 0 && mine.tokens === 0 && mine.cost === 0) continue;
    for (const field of ["input", "output", "cacheRead", "cacheWrite", "tokens", "cost", "ms", "turns"] as const) {
      totals[field] += mine[field];
    }
    totals.sessions++;
    top.push({
      sessionId: session.sessionId,
      cwd: session.cwd,
      cost: mine.cost,
      tokens: mine.tokens,
      turns: mine.turns,
    });
  }
  top.sort((a, b) => b.cost - a.cost || b.tokens - a.tokens);
  return {
    totals,
    byDay: everyDay(range).map((day) => ({ key: day, label: day, ...(days.get(day) ?? emptySums()) })),
    byWeek: [...new Set(everyDay(range).map(weekOf))].map((week) => ({
      key: week,
      label: `week of ${week}`,
      ...(weeks.get(week) ?? emptySums()),
    })),
    byModel: models.ranked((key) => key),
    byProject: projects.ranked((key) => key || "(no folder)"),
    devices,
    byTool: [...tools.values()]
      .map(({ last: _, ...group }) => group)
      .sort((a, b) => b.calls - a.calls || (a.tool < b.tool ? -1 : 1))
      .slice(0, MAX_GROUPS),
    top: top.slice(0, TOP_SESSIONS),
    uncounted: usage.uncounted,
  };
}

/** Every day of a range, oldest first. */
function everyDay(range: InsightsRange): string[] {
  const out: string[] = [];
  for (let ms = Date.parse(range.from); ms <= Date.parse(range.to); ms += DAY_MS) {
    out.push(new Date(ms).toISOString().slice(0, 10));
  }
  return out;
}
