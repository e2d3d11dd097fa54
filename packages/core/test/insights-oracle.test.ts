/**
 * Usage rollups against pi's own accounting: every fixture pi can read, appended in several
 * bodies through the append protocol, rolls up to pi 1.6.0's cost breakdown of the same file
 * (`getUsageCostBreakdown`, asked of pi in its own runtime): the same buckets, the same tokens
 * exactly, the same cost up to the float rounding of adding per-day sums.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { inRepoCorpus, loadCorpus, PI_HAS_NO_ANSWER, sharedCorpus } from "@pisync/testing/fixtures";
import { type PiUsageBucket, piAgentLoopSession, piUsage } from "@pisync/testing/pi1";
import { describe, expect, it } from "vitest";
import { Appender } from "../src/append.js";
import { Insights, insightsRange } from "../src/insights.js";
import { memoryStores } from "./memory-stores.js";

const enc = (text: string) => new TextEncoder().encode(text);

/** A file's text in up to three bodies of whole lines. */
function bodies(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  const third = Math.max(1, Math.ceil(lines.length / 3));
  const out: string[] = [];
  for (let i = 0; i < lines.length; i += third) out.push(lines.slice(i, i + third).join(""));
  return out;
}

/** The session id a file's header names (the append checks it), or any id when it names none. */
function sessionIdOf(text: string): string {
  try {
    const first = text.split("\n").find((line) => line.trim() !== "") ?? "";
    const id = JSON.parse(first.replace(/^\uFEFF/, "").trim())?.id;
    if (typeof id === "string" && /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id)) return id;
  } catch {
    // Not a header: any id will do.
  }
  return "s1";
}

/** A session appended by user `u` in up to three bodies, from two devices: its stores and id. */
async function appended(text: string) {
  const stores = memoryStores();
  const appender = new Appender(stores, () => new Date("2026-02-01T00:00:00.000Z"));
  const sessionId = sessionIdOf(text);
  let offset = 0;
  for (const [i, body] of bodies(text).entries()) {
    const result = await appender.append({
      userId: "u",
      sessionId,
      offset,
      body: enc(body),
      device: `device${i % 2}`,
    });
    offset = result.offset;
  }
  return { stores, sessionId };
}

/** A session's rollup summed by bucket: `key → { cost, tokens }`, as pi reports its breakdown. */
async function rolledUp(text: string) {
  const { stores, sessionId } = await appended(text);
  const head = await stores.meta.getHead("u", sessionId);
  const byKey = new Map<string, { cost: number; tokens: number }>();
  for (const [, key, , input, output, cacheRead, cacheWrite, cost] of head?.summary.usage?.rows ?? []) {
    const sums = byKey.get(key) ?? { cost: 0, tokens: 0 };
    sums.cost += cost;
    sums.tokens += input + output + cacheRead + cacheWrite;
    byKey.set(key, sums);
  }
  return byKey;
}

const files = [
  ...loadCorpus(inRepoCorpus).filter((f) => !PI_HAS_NO_ANSWER.has(f.name.split("/").pop() ?? "")),
  ...loadCorpus(sharedCorpus).filter((f) => !PI_HAS_NO_ANSWER.has(f.name.split("/").pop() ?? "")),
].map((f) => ({ name: f.name, text: readFileSync(f.jsonl, "utf8") }));
const pi1Corpus = ["system-prompts", "branches", "compactions", "context-edits"].map((name) => ({
  name: `pi-1.6.0/${name}`,
  text: readFileSync(join(inRepoCorpus, "pi-1.6.0", `${name}.jsonl`), "utf8"),
}));

const usage = (n: number, cost: number) => ({
  input: n,
  output: 2 * n,
  cacheRead: 3 * n,
  cacheWrite: 4 * n,
  totalTokens: 10 * n,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
});
/** Every kind of usage pi counts, over two days: what the fixtures do not all have. */
const everyKind = (() => {
  let n = 0;
  const at = (day: number) => `2026-03-0${day}T10:00:0${n % 10}.000Z`;
  const entry = (day: number, fields: Record<string, unknown>) => {
    n++;
    return JSON.stringify({ id: `e${n}`, parentId: n === 1 ? null : `e${n - 1}`, timestamp: at(day), ...fields });
  };
  const assistant = (day: number, extra: Record<string, unknown>) =>
    entry(day, {
      type: "message",
      message: { role: "assistant", content: [{ type: "toolCall", id: "c", name: "bash", arguments: {} }], ...extra },
    });
  return `${[
    JSON.stringify({ type: "session", version: 3, id: "every-kind", timestamp: at(1), cwd: "/w" }),
    assistant(1, { provider: "anthropic", model: "claude-x", usage: usage(10, 0.1) }),
    assistant(1, { provider: "openai", model: "gpt-router", responseModel: "gpt-5", usage: usage(7, 0.07) }),
    entry(1, {
      type: "message",
      message: { role: "toolResult", toolCallId: "c", toolName: "bash", content: [], usage: usage(3, 0.03) },
    }),
    entry(2, {
      type: "usage",
      usageKind: "cache_warm",
      provider: "anthropic",
      model: "claude-x",
      usage: usage(5, 0.05),
    }),
    entry(2, { type: "compaction", summary: "s", firstKeptEntryId: "e1", tokensBefore: 9, usage: usage(2, 0.02) }),
    entry(2, { type: "branch_summary", fromId: "e1", summary: "b", usage: usage(1, 0.01) }),
    assistant(2, { provider: "anthropic", model: "claude-x", usage: usage(4, 0.04) }),
  ].join("\n")}\n`;
})();

/** Expects our sums by bucket to be pi's: the same buckets, tokens exactly, cost to 9 places. Answers how many were compared. */
function expectPiBuckets(name: string, ours: Map<string, { cost: number; tokens: number }>, theirs: PiUsageBucket[]) {
  // pi lists the buckets with any cost or tokens; ours keeps every bucket that had usage.
  const kept = [...ours].filter(([, s]) => s.cost > 0 || s.tokens > 0);
  expect(kept.map(([key]) => key).sort(), name).toEqual(theirs.map((b) => b.key).sort());
  for (const bucket of theirs) {
    const mine = ours.get(bucket.key);
    expect(mine?.tokens, `${name} ${bucket.key}`).toBe(bucket.tokens);
    expect(mine?.cost, `${name} ${bucket.key}`).toBeCloseTo(bucket.cost, 9);
  }
  return theirs.length;
}

/** Tool calls and tool result time per tool, read from a file's lines as pi wrote them. */
function toolsOfFile(text: string): Map<string, { calls: number; ms: number }> {
  const tools = new Map<string, { calls: number; ms: number }>();
  const of = (name: string) => tools.get(name) ?? tools.set(name, { calls: 0, ms: 0 }).get(name);
  for (const line of text.split("\n").filter(Boolean)) {
    const message = JSON.parse(line).message;
    if (message?.role === "assistant") {
      for (const part of message.content) if (part.type === "toolCall") (of(part.name) as { calls: number }).calls++;
    }
    if (message?.role === "toolResult") (of(message.toolName) as { ms: number }).ms += message.durationMs;
  }
  return tools;
}

describe("usage rollups equal pi 1.6.0's cost breakdown", () => {
  const sessions = [...files, ...pi1Corpus, { name: "every-kind", text: everyKind }]
    .filter((f) => f.text.length > 0)
    .map((f) => ({ ...f, text: f.text.endsWith("\n") ? f.text : `${f.text}\n` }));

  it("on every fixture pi reads, appended in several bodies", async () => {
    const answers = piUsage(sessions);
    let buckets = 0;
    for (const [i, session] of sessions.entries()) {
      const theirs = answers[i];
      if (!theirs) continue; // pi throws on this file: no answer to compare
      buckets += expectPiBuckets(session.name, await rolledUp(session.text), theirs);
    }
    // The corpus has usage to compare (a run where nothing was compared proves nothing).
    expect(buckets).toBeGreaterThan(10);
  }, 120_000);

  it("on a session pi 1.6.0's agent loop wrote (two models, its tools, a compaction), and in the report", async () => {
    const text = piAgentLoopSession();
    const [theirs] = piUsage([{ text }]);
    // What pi's loop wrote: both models answered and priced, the compaction's summaries counted.
    expect(theirs?.map((b) => b.key).sort()).toEqual(["Tools/summaries", "faux/faux-large", "faux/faux-small"]);
    for (const bucket of theirs ?? []) expect(bucket.cost, bucket.key).toBeGreaterThan(0);
    expectPiBuckets("agent loop", await rolledUp(text), theirs ?? []);

    // The report's totals are pi's whole accounting of the session; its tools are the file's.
    const { stores } = await appended(text);
    const report = await new Insights(stores.meta).report("u", insightsRange({ since: "2d" }, new Date()));
    const sum = (field: "tokens" | "cost") => (theirs ?? []).reduce((total, b) => total + b[field], 0);
    expect(report.totals.tokens).toBe(sum("tokens"));
    expect(report.totals.cost).toBeCloseTo(sum("cost"), 9);
    expect(report.totals.sessions).toBe(1);
    const tools = toolsOfFile(text);
    expect([...tools.keys()].sort()).toEqual(["bash", "edit", "read", "write"]);
    expect(Object.fromEntries(report.byTool.map((t) => [t.tool, { calls: t.calls, ms: t.ms }]))).toEqual(
      Object.fromEntries(tools),
    );
  }, 120_000);
});
