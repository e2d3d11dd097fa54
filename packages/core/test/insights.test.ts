/**
 * Insights over the append protocol: rollups by day, device and tool, time measured, hostile
 * files bounded, and reports that group, range and stay within one user.
 */
import type { ToolRow, UsageRow } from "@pisync/store";
import { describe, expect, it } from "vitest";
import { Appender } from "../src/append.js";
import { fitRange, Insights, insightsRange, sinceDay } from "../src/insights.js";
import { advanceRollup, MAX_ROLLUP_ROWS, OTHER } from "../src/usage-rollup.js";
import { memoryStores } from "./memory-stores.js";

const enc = (text: string) => new TextEncoder().encode(text);
const usage = (tokens: number, cost: number) => ({
  input: tokens,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: tokens,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
});

/** A session's lines: a header, then the given entries chained by parent. */
function session(id: string, cwd: string, entries: Record<string, unknown>[]): string {
  const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-03-01T09:00:00.000Z", cwd })];
  for (const [i, e] of entries.entries()) {
    lines.push(JSON.stringify({ id: `${id}-${i}`, parentId: i ? `${id}-${i - 1}` : null, ...e }));
  }
  return `${lines.join("\n")}\n`;
}
const user = (at: string) => ({ type: "message", timestamp: at, message: { role: "user", content: "hi" } });
const assistant = (at: string, model: string, tokens: number, cost: number, extra: Record<string, unknown> = {}) => ({
  type: "message",
  timestamp: at,
  message: {
    role: "assistant",
    provider: "p",
    model,
    content: [{ type: "toolCall", id: "c", name: "read", arguments: {} }],
    usage: usage(tokens, cost),
    ...extra,
  },
});
const toolResult = (at: string, durationMs?: number) => ({
  type: "message",
  timestamp: at,
  message: { role: "toolResult", toolCallId: "c", toolName: "read", content: [], durationMs },
});

async function setUp() {
  const stores = memoryStores();
  const appender = new Appender(stores, () => new Date("2026-03-05T00:00:00.000Z"));
  const append = (userId: string, sessionId: string, text: string, device: string, offset = 0) =>
    appender.append({ userId, sessionId, offset, body: enc(text), device });
  return { stores, append, insights: new Insights(stores.meta) };
}

describe("usage rollups", () => {
  it("split usage by day, bucket and the device that sent it, and count tool calls and time", async () => {
    const { stores, append } = await setUp();
    const text = session("s1", "/w/app", [
      user("2026-03-01T10:00:00.000Z"),
      assistant("2026-03-01T10:00:30.000Z", "m1", 100, 0.5),
      toolResult("2026-03-01T10:00:31.000Z", 250),
      assistant("2026-03-02T08:00:00.000Z", "m2", 40, 0.25, { durationMs: 1500 }),
    ]);
    const lines = text.split(/(?<=\n)/);
    const first = lines.slice(0, 3).join("");
    await append("alice", "s1", first, "laptop");
    await append("alice", "s1", lines.slice(3).join(""), "desktop", enc(first).length);
    const rollup = (await stores.meta.getHead("alice", "s1"))?.summary.usage;
    expect(rollup?.rows).toEqual([
      // 30 s after the user's message: no durationMs, so the gap is the model's time.
      ["2026-03-01", "p/m1", "laptop", 100, 0, 0, 0, 0.5, 30_000, 1],
      ["2026-03-02", "p/m2", "desktop", 40, 0, 0, 0, 0.25, 1500, 1],
    ]);
    expect(rollup?.tools).toEqual([
      ["2026-03-01", "read", 1, 250],
      ["2026-03-02", "read", 1, 0],
    ]);
  });

  it("stay bounded on a hostile file, with every token still counted", () => {
    const entries = Array.from({ length: 3 * MAX_ROLLUP_ROWS }, (_, i) => ({
      type: "message",
      timestamp: new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString(),
      message: { role: "assistant", provider: "p", model: `model-${i}`, content: [], usage: usage(1, 0.001) },
    }));
    const rollup = advanceRollup(undefined, entries, "d", "2026-01-01T00:00:00.000Z");
    expect(rollup.rows.length).toBeLessThanOrEqual(MAX_ROLLUP_ROWS + 100);
    expect(rollup.rows.some((row) => row[1] === OTHER)).toBe(true);
    expect(rollup.rows.reduce((sum, row) => sum + row[3], 0)).toBe(entries.length);
    expect(rollup.rows.reduce((sum, row) => sum + row[9], 0)).toBe(entries.length);
  });

  it("are not started on a head that was written without one (no partial sums)", async () => {
    const { stores, append } = await setUp();
    const text = session("s2", "/w", [assistant("2026-03-01T10:00:00.000Z", "m", 1, 1)]);
    await append("alice", "s2", text, "d");
    const head = await stores.meta.getHead("alice", "s2");
    if (!head) throw new Error("no head");
    delete head.summary.usage;
    await stores.meta.commit({ head: { ...head, revision: head.revision + 1 }, expectedRevision: head.revision });
    const more = `${JSON.stringify(assistant("2026-03-02T10:00:00.000Z", "m", 5, 5))}\n`;
    await append("alice", "s2", more, "d", enc(text).length);
    expect((await stores.meta.getHead("alice", "s2"))?.summary.usage).toBeUndefined();
  });
});

describe("insights reports", () => {
  it("group a user's sessions by day, week, model, project, device and tool, within the range", async () => {
    const { stores, append, insights } = await setUp();
    await stores.meta.putToken({ hash: "h1", userId: "alice", id: "laptop", name: "Laptop", createdAt: "x" });
    await append(
      "alice",
      "a1",
      session("a1", "/w/app", [
        assistant("2026-03-02T10:00:00.000Z", "m1", 10, 1),
        assistant("2026-03-03T10:00:00.000Z", "m2", 20, 2),
      ]),
      "laptop",
    );
    await append("alice", "a2", session("a2", "/w/lib", [assistant("2026-03-03T11:00:00.000Z", "m1", 5, 4)]), "gone");
    // Outside the range, and another user's: neither counts.
    await append("alice", "a3", session("a3", "/w/old", [assistant("2026-01-01T11:00:00.000Z", "m1", 99, 99)]), "x");
    await append("bob", "b1", session("b1", "/w/app", [assistant("2026-03-03T11:00:00.000Z", "m1", 7, 7)]), "x");

    const report = await insights.report("alice", { from: "2026-03-01", to: "2026-03-04" });
    expect(report.totals).toMatchObject({ tokens: 35, cost: 7, turns: 3, sessions: 2 });
    expect(report.byDay.map((d) => [d.key, d.cost])).toEqual([
      ["2026-03-01", 0],
      ["2026-03-02", 1],
      ["2026-03-03", 6],
      ["2026-03-04", 0],
    ]);
    expect(report.byWeek.map((w) => w.key)).toEqual(["2026-02-23", "2026-03-02"]);
    expect(report.byModel.map((m) => [m.key, m.cost, m.sessions])).toEqual([
      ["p/m1", 5, 2],
      ["p/m2", 2, 1],
    ]);
    expect(report.byProject.map((p) => [p.label, p.cost])).toEqual([
      ["/w/lib", 4],
      ["/w/app", 3],
    ]);
    expect(report.byDevice.map((d) => [d.label, d.cost])).toEqual([
      ["removed device gone", 4],
      ["Laptop", 3],
    ]);
    expect(report.byTool).toEqual([{ tool: "read", calls: 3, ms: 0, sessions: 2 }]);
    expect(report.topSessions.map((s) => s.sessionId)).toEqual(["a2", "a1"]);
    expect(JSON.stringify(report)).not.toContain(`"b1"`); // a value: random token ids may hold the letters
    // Every group answers its sums and nothing of how they were counted.
    const fields = ["key", "label", "input", "output", "cacheRead", "cacheWrite", "tokens", "cost", "ms", "turns"];
    const groups = [report.byDay, report.byWeek, report.byModel, report.byProject, report.byDevice].flat();
    for (const group of groups) expect(Object.keys(group).sort()).toEqual([...fields, "sessions"].sort());

    const bob = await insights.report("bob", { from: "2026-03-01", to: "2026-03-04" });
    expect(bob.totals).toMatchObject({ tokens: 7, cost: 7, sessions: 1 });
  });

  it("take ranges as days or `since`, and refuse malformed and reversed ones", () => {
    const now = new Date("2026-03-10T12:00:00.000Z");
    expect(insightsRange({}, now)).toEqual({ from: "2026-02-09", to: "2026-03-10" });
    expect(insightsRange({ since: "7d" }, now)).toEqual({ from: "2026-03-04", to: "2026-03-10" });
    expect(sinceDay("2w", now)).toBe("2026-02-25");
    expect(() => insightsRange({ since: "7x" }, now)).toThrow(/since/);
    expect(() => insightsRange({ from: "2026-03-11", to: "2026-03-10" }, now)).toThrow(/after/);
    // Longer than a year, or all time: marked to be fitted to the days that have usage.
    expect(insightsRange({ from: "2024-01-01", to: "2026-03-10" }, now)).toEqual({
      from: "2024-01-01",
      to: "2026-03-10",
      fit: true,
    });
    expect(insightsRange({ since: "all" }, now)).toEqual({ from: "0001-01-01", to: "2026-03-10", fit: true });
    expect(insightsRange({ since: "1000d" }, now)).toMatchObject({ from: "2023-06-15", fit: true });
    expect(() => insightsRange({ from: "2026-13-01" }, now)).toThrow(/day/);
  });

  it("fit a long range to the days with usage, and to ten years at most", () => {
    const usage = (days: string[]) => ({
      sessions: [{ sessionId: "s", rows: days.map((d) => [d, "p/m", "", 1, 0, 0, 0, 0, 0, 1]), tools: [] }],
      uncounted: 0,
    });
    const all = { from: "0001-01-01", to: "2026-03-10", fit: true };
    expect(fitRange(all, usage(["2025-12-01", "2026-01-05"]) as never)).toEqual({
      from: "2025-12-01",
      to: "2026-03-10",
    });
    expect(fitRange(all, usage([]) as never)).toEqual({ from: "2026-03-10", to: "2026-03-10" });
    // A hostile timestamp a thousand years back does not make a thousand years of days.
    expect(fitRange(all, usage(["1026-01-01", "2026-01-05"]) as never)).toEqual({
      from: "2016-03-03",
      to: "2026-03-10",
    });
    expect(fitRange({ ...all, to: "9999-12-31" }, usage(["2025-12-01", "2026-01-05"]) as never)).toEqual({
      from: "2025-12-01",
      to: "2026-01-05",
    });
  });
});

describe("a year's report of a large library", () => {
  it("is added up in slices: the event loop is never held long, and the same report asked meanwhile is made once", {
    timeout: 60_000,
  }, async () => {
    const { stores, insights } = await setUp();
    const start = Date.parse("2025-01-01");
    const days = Array.from({ length: 365 }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
    // 500 sessions with usage on every day: what a store answers for a year of a large library.
    // (Rows shared between sessions: the test measures adding up, not the garbage of making them.)
    const rows = [0, 1, 2, 3].map((m) =>
      days.map((day): UsageRow => [day, `p/m${m}`, `dev${m % 3}`, 10, 5, 0, 0, 0.01, 100, 1]),
    );
    const tools = days.map((day): ToolRow => [day, "read", 2, 40]);
    const sessions = Array.from({ length: 500 }, (_, s) => ({
      sessionId: `s${s}`,
      cwd: `/w/p${s % 40}`,
      rows: rows[s % 4],
      tools,
    }));
    let reads = 0;
    stores.meta.listUsage = async () => {
      reads++;
      return { sessions, uncounted: 0 };
    };
    // The longest gap between ticks of a 10 ms timer: how long the loop was held at once.
    let last = performance.now();
    let held = 0;
    const ticks = setInterval(() => {
      held = Math.max(held, performance.now() - last);
      last = performance.now();
    }, 10);
    // Turns of the event loop while the report is made (a chain of setImmediate).
    let turns = 0;
    let making = true;
    const spin = () => {
      turns++;
      if (making) setImmediate(spin);
    };
    setImmediate(spin);
    const range = { from: days[0], to: days[days.length - 1] };
    const [report, again] = await Promise.all([insights.report("alice", range), insights.report("alice", range)]);
    making = false;
    await new Promise((resolve) => setTimeout(resolve, 50)); // the timer sees the last hold
    clearInterval(ticks);
    expect(report.totals.sessions).toBe(500);
    expect(report.totals.turns).toBe(500 * 365);
    expect(again).toBe(report);
    expect(reads).toBe(1);
    // Adding it up at once holds the loop for about a second with no turn in between; in slices
    // of 20 ms, other work runs between them (the hold asserted with room for a busy machine).
    expect(turns).toBeGreaterThanOrEqual(5);
    expect(held).toBeLessThan(1000);
  });
});
