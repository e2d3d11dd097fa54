/**
 * Differential, property-based: random session trees are written by pi's own SessionManager,
 * serialized as pi writes them, and read back by us; for every entry as leaf, our context must
 * equal pi's `buildSessionContext` over the same entries.
 */
import { buildSessionContext as piBuildSessionContext, SessionManager } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildSessionContext, parseSession } from "../src/index.js";

const usage = (n: number) => ({
  input: n,
  output: n,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 2 * n,
  cost: { input: n / 1000, output: n / 1000, cacheRead: 0, cacheWrite: 0, total: n / 500 },
});

type Op =
  | { kind: "user"; text: string }
  | { kind: "assistant"; text: string; model: number }
  | { kind: "tool"; text: string }
  | { kind: "thinking"; level: string }
  | { kind: "model"; model: number }
  | { kind: "compaction"; pick: number; keepOffPath: boolean; summary: string }
  | { kind: "branch"; pick: number }
  | { kind: "branchSummary"; pick: number; summary: string }
  | { kind: "customMessage"; text: string; display: boolean }
  | { kind: "custom"; data: number }
  | { kind: "label"; pick: number; label: string }
  | { kind: "name"; name: string }
  | { kind: "reset" };

const text = fc.string({ maxLength: 12 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("user" as const), text }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("assistant" as const), text, model: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("tool" as const), text }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("thinking" as const), level: fc.constantFrom("off", "low", "high") }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("model" as const), model: fc.nat(2) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("compaction" as const),
      pick: fc.nat(),
      keepOffPath: fc.boolean(),
      summary: text,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("branch" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("branchSummary" as const), pick: fc.nat(), summary: text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("customMessage" as const), text, display: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("custom" as const), data: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("label" as const), pick: fc.nat(), label: text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("name" as const), name: text }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" as const }) },
);

const MODELS = [
  ["anthropic", "claude-sonnet-4-5"],
  ["openai", "gpt-5"],
  ["google", "gemini-2.5-pro"],
] as const;

/** Drives pi's SessionManager through the operations; returns the file pi would have written. */
function writeWithPi(ops: Op[]) {
  const sm = SessionManager.inMemory("/home/dev/project");
  let clock = 1_750_000_000_000;
  const ids = () => sm.getEntries().map((e) => e.id);
  const pickId = (n: number) => {
    const all = ids();
    return all.length ? all[n % all.length] : undefined;
  };
  for (const o of ops) {
    clock += 1000;
    switch (o.kind) {
      case "user":
        sm.appendMessage({ role: "user", content: o.text, timestamp: clock });
        break;
      case "assistant": {
        const [provider, model] = MODELS[o.model];
        sm.appendMessage({
          role: "assistant",
          content: [{ type: "text", text: o.text }],
          api: "messages",
          provider,
          model,
          usage: usage(o.text.length + 1),
          stopReason: "stop",
          timestamp: clock,
        });
        break;
      }
      case "tool":
        sm.appendMessage({
          role: "toolResult",
          toolCallId: `call_${clock}`,
          toolName: "bash",
          content: [{ type: "text", text: o.text }],
          isError: false,
          timestamp: clock,
        });
        break;
      case "thinking":
        sm.appendThinkingLevelChange(o.level);
        break;
      case "model":
        sm.appendModelChange(MODELS[o.model][0], MODELS[o.model][1]);
        break;
      case "compaction": {
        const kept = o.keepOffPath ? "ffffffff" : pickId(o.pick);
        if (kept) sm.appendCompaction(o.summary, kept, o.pick % 100000);
        break;
      }
      case "branch": {
        const id = pickId(o.pick);
        if (id) sm.branch(id);
        break;
      }
      case "branchSummary": {
        const id = pickId(o.pick);
        if (id) sm.branchWithSummary(id, o.summary);
        break;
      }
      case "customMessage":
        sm.appendCustomMessageEntry("ext", o.text, o.display, { n: o.text.length });
        break;
      case "custom":
        sm.appendCustomEntry("ext-state", { data: o.data });
        break;
      case "label": {
        const id = pickId(o.pick);
        if (id) sm.appendLabelChange(id, o.label || undefined);
        break;
      }
      case "name":
        sm.appendSessionInfo(o.name);
        break;
      case "reset":
        sm.resetLeaf();
        break;
    }
  }
  const lines = [sm.getHeader(), ...sm.getEntries()].map((e) => JSON.stringify(e));
  return { sm, text: `${lines.join("\n")}\n` };
}

describe("differential against pi's own SessionManager and buildSessionContext", () => {
  it("random trees: every leaf's context, the default leaf, labels and name match pi", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), (ops) => {
        const { sm, text } = writeWithPi(ops);
        const session = parseSession(text);
        const piEntries = sm.getEntries();
        expect(session.problems).toEqual([]);
        expect(session.entries).toEqual(piEntries);
        expect(session.leafId).toBe(piEntries.at(-1)?.id ?? null);
        expect(session.name).toBe(sm.getSessionName());
        for (const entry of piEntries) expect(session.labels.get(entry.id)).toBe(sm.getLabel(entry.id));
        for (const leaf of [undefined, ...piEntries.map((e) => e.id)]) {
          expect(buildSessionContext(session, leaf)).toEqual(piBuildSessionContext(piEntries, leaf));
        }
        // The array form behaves as pi's function on the same array.
        expect(buildSessionContext(piEntries)).toEqual(piBuildSessionContext(piEntries));
      }),
      { numRuns: 150 },
    );
  });
});
