/**
 * pi 1.x is the oracle too: the sessions in fixtures/pi-1.6.0 were written by pi 1.6.0's own
 * SessionManager (@pisync/testing's src/pi1/generate-corpus.ts), and pi 1.6.0 answers for every leaf of them here,
 * live, in its own runtime (Node 22). Our answer must be pi's for every leaf, from a whole file,
 * from entries as pi holds them, and from stored records primed with only what
 * `recordsForContext` asks for.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { baseName, inRepoCorpus, leafWherePiHasNone, loadCorpus, PI_HAS_NO_ANSWER } from "@pisync/testing/fixtures";
import { type OracleContexts, piContexts } from "@pisync/testing/pi1";
import { beforeAll, describe, expect, it } from "vitest";
import { buildSessionContext, checkEntry, parseSession, pathTotals } from "../src/index.js";
import { storedIndexFor } from "./stored-index.js";

const corpus = join(inRepoCorpus, "pi-1.6.0");
const files = readdirSync(corpus)
  .filter((f) => f.endsWith(".jsonl"))
  .sort()
  .map((name) => ({ name, text: readFileSync(join(corpus, name), "utf8") }));

const json = (value: unknown) => JSON.parse(JSON.stringify(value));

describe("pi 1.6.0's corpus: same answers as pi 1.6.0", () => {
  let answers: OracleContexts[];
  beforeAll(() => {
    answers = piContexts(files.map((f) => ({ text: f.text })));
  });

  it("the corpus holds every entry type and rule pi 1.x added", () => {
    const all = files.flatMap((f) => parseSession(f.text).entries) as Record<string, unknown>[];
    const roles = all.map((e) => (e.message as { role?: string } | undefined)?.role);
    expect(roles).toContain("system");
    expect(all.some((e) => e.type === "usage")).toBe(true);
    expect(all.some((e) => e.type === "context_edit" && e.replacement === null)).toBe(true);
    expect(all.some((e) => e.type === "context_edit" && e.replacement !== null)).toBe(true);
    const compactions = all.filter((e) => e.type === "compaction");
    expect(compactions.some((c) => c.systemMessage)).toBe(true);
    expect(compactions.some((c) => !c.systemMessage)).toBe(true);
    expect(compactions.some((c) => c.firstKeptEntryId === c.id)).toBe(true);
    const messages = all.map((e) => e.message as Record<string, unknown> | undefined);
    for (const field of ["thinkingLevel", "durationMs", "nestedCalls"]) {
      expect(messages.some((m) => m && field in m)).toBe(true);
    }
    expect(messages.some((m) => m?.role === "user" && m.content === null)).toBe(true);
  });

  it.each(files.map((f, i) => [f.name, i] as const))("%s: every leaf", (_name, i) => {
    const { text } = files[i];
    const session = parseSession(text);
    expect(session.problems).toEqual([]);
    const answered = answers[i];
    expect(answered.length).toBe(session.entries.length + 1);
    for (const [leaf, theirs] of answered) {
      const leafId = leaf ?? undefined;
      expect(json(buildSessionContext(session, leafId)), `${leaf}`).toEqual(theirs);
      expect(json(buildSessionContext(session.entries, leafId)), `${leaf} (entries)`).toEqual(theirs);
      expect(json(buildSessionContext(storedIndexFor(session, text, leafId), leafId)), `${leaf} (stored)`).toEqual(
        theirs,
      );
    }
  });

  it("every entry pi 1.6.0 wrote fits the schema of its type", () => {
    for (const { name, text } of files) {
      for (const entry of parseSession(text).entries) expect(checkEntry(entry), `${name} ${entry.id}`).toBeUndefined();
    }
  });

  it("totals count usage entries, as pi's session stats do", () => {
    const text = files.find((f) => f.name === "system-prompts.jsonl")?.text ?? "";
    const session = parseSession(text);
    const entries = session.entries as Record<string, unknown>[];
    const usageEntries = entries.filter((e) => e.type === "usage");
    expect(usageEntries.length).toBe(2);
    const sum = (pick: (e: Record<string, unknown>) => unknown) =>
      entries
        .map(pick)
        .reduce<number>((n, u) => n + ((u as { totalTokens?: number } | undefined)?.totalTokens ?? 0), 0);
    const fromMessages = sum((e) => (e.message as { usage?: unknown } | undefined)?.usage);
    const fromUsage = sum((e) => (e.type === "usage" ? e.usage : undefined));
    expect(fromUsage).toBeGreaterThan(0);
    expect(pathTotals(session.index).totalTokens).toBe(fromMessages + fromUsage);
  });
});

describe("pi 0.73.1's corpus: pi 1.6.0 answers as we do", () => {
  // The same files the 0.73.1 test reads, now answered by pi 1.6.0: the null-content rule is the
  // one difference, and we answer as 1.x. Leaves after a compaction with retainedTail follow the
  // newer spec (pi ignores retainedTail), and pi throws on a message entry without a message.
  const fixtures = loadCorpus(inRepoCorpus).filter((f) => !PI_HAS_NO_ANSWER.has(baseName(f)));

  it("every leaf pi answers for", () => {
    const texts = fixtures.map((f) => readFileSync(f.jsonl, "utf8"));
    const answers = piContexts(texts.map((text) => ({ text })));
    let compared = 0;
    fixtures.forEach((fixture, i) => {
      const session = parseSession(texts[i]);
      if (session.version < 2) return; // pi gives v1 entries random ids
      const withRetainedTail = session.entries.some((e) => e.type === "compaction" && "retainedTail" in e);
      // The documented difference: a last value without an id is no leaf; the last entry with one is.
      const ruleLeaf = leafWherePiHasNone(texts[i]);
      const piAt = new Map(answers[i]);
      for (const [leaf, theirs] of answers[i]) {
        if ((theirs as { piThrows?: string }).piThrows || withRetainedTail) continue;
        const want = leaf === null && ruleLeaf !== undefined ? piAt.get(ruleLeaf) : theirs;
        expect(json(buildSessionContext(session, leaf ?? undefined)), `${fixture.name} ${leaf}`).toEqual(want);
        compared++;
      }
    });
    expect(compared).toBeGreaterThan(50);
  });
});
