/**
 * Differential, property-based: random session trees are written by pi's own SessionManager (in a
 * child process: pi 0.73.1 under the tests' Node, pi 1.6.0 under Node 22), and read back by pi
 * and by us; for every entry as leaf, our context must equal pi's `buildSessionContext`, from the
 * file, from the entries as pi holds them, and from stored records primed with only what
 * `recordsForContext` names. The default leaf, labels, name and entries must be pi's too.
 */

import { type Op, type PiVersion, piWrite } from "@pisync/testing/pi1";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildSessionContext, checkEntry, parseSession } from "../src/index.js";
import { storedIndexFor } from "./stored-index.js";

const text = fc.string({ maxLength: 12 });

/** The operations pi 0.73.1's writer runs (@pisync/testing's src/pi1/pi1-child.mjs). */
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("user"), text }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("assistant"), text, model: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("tool"), text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("thinking"), level: fc.constantFrom("off", "low", "high") }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("model"), model: fc.nat(2) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("compaction"),
      pick: fc.nat(),
      keep: fc.constantFrom("pick", "offPath"),
      summary: text,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("branch"), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("branchSummary"), pick: fc.nat(), summary: text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("customMessage"), text, display: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("custom"), data: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("label"), pick: fc.nat(), label: text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("name"), name: text }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" }) },
);

/** True one time in `n`. */
const rarely = (n: number) =>
  fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: n - 1, arbitrary: fc.constant(false) });

/**
 * The operations pi 1.x's writer runs (@pisync/testing's src/pi1/pi1-child.mjs): 0.73.1's, plus system messages,
 * usage entries, context edits (pi's API refuses some: those are written as another hand would,
 * off the branch, of entries without editable content, of ids not in the file), compactions that
 * keep nothing, 1.x message fields and null content.
 */
const op1: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("user"), text, nullContent: rarely(10) }) },
  {
    weight: 5,
    arbitrary: fc.record(
      {
        kind: fc.constant("assistant"),
        text,
        model: fc.nat(2),
        thinkingLevel: fc.constantFrom("low", "high"),
        durationMs: fc.nat(5000),
      },
      { requiredKeys: ["kind", "text", "model"] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      { kind: fc.constant("tool"), text, nested: fc.boolean(), durationMs: fc.nat(500) },
      { requiredKeys: ["kind", "text", "nested"] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        kind: fc.constant("system"),
        content: text,
        sections: fc.dictionary(fc.constantFrom("preamble", "tools", "skills", "cwd"), fc.option(text), { maxKeys: 3 }),
        toolsAdded: fc.array(fc.nat(4), { maxLength: 3 }),
        toolsRemoved: fc.array(fc.nat(4), { maxLength: 2 }),
      },
      { requiredKeys: ["kind", "content"] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("thinking"), level: fc.constantFrom("off", "low", "high") }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("model"), model: fc.nat(2) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("usage"),
      usageKind: fc.constantFrom("cache_warm", "other"),
      model: fc.nat(2),
      n: fc.nat(1000),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("compaction"),
      pick: fc.nat(),
      keep: fc.constantFrom("pick", "pick", "none", "offPath"),
      summary: text,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("edit"),
      pick: fc.nat(),
      replacement: fc.oneof(fc.constant(null), text, fc.constant("array")),
      targetOffFile: rarely(20),
      raw: rarely(3),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("branch"), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("branchSummary"), pick: fc.nat(), summary: text }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("customMessage"), text, display: fc.boolean(), nullContent: rarely(5) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("custom"), data: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("label"), pick: fc.nat(), label: text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("name"), name: text }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" }) },
);

const json = (value: unknown) => JSON.parse(JSON.stringify(value));

/**
 * Samples `runs` programs, has pi write and read them all in one process (its module takes a
 * second to load), and checks our reading of each against pi's. The seed in a failure message
 * replays the batch.
 */
function differential(pi: PiVersion, ops: fc.Arbitrary<Op>, runs: number) {
  const seed = Date.now() ^ (Math.random() * 0x7fffffff);
  const programs = fc.sample(fc.array(ops, { minLength: 1, maxLength: 60 }), { numRuns: runs, seed });
  let leaves = 0;
  piWrite(programs, { pi }).forEach((written, run) => {
    const { text, contexts, entries } = written;
    const where = `pi ${pi}, seed ${seed}, program ${run}: ${JSON.stringify(programs[run])}`;
    const session = parseSession(text);
    expect(session.problems, where).toEqual([]);
    expect(json(session.entries), where).toEqual(entries);
    expect(session.leafId, where).toBe((entries.at(-1)?.id as string | undefined) ?? null);
    expect(session.name, where).toBe(written.name ?? undefined);
    expect(Object.fromEntries(session.labels), where).toEqual(written.labels);
    for (const entry of session.entries) expect(checkEntry(entry), `${where} ${entry.id}`).toBeUndefined();
    for (const [leaf, theirs] of contexts) {
      const leafId = leaf ?? undefined;
      expect(json(buildSessionContext(session, leafId)), `${where}, leaf ${leaf}`).toEqual(theirs);
      expect(json(buildSessionContext(entries, leafId)), `${where}, leaf ${leaf} (entries)`).toEqual(theirs);
      const stored = storedIndexFor(session, text, leafId);
      expect(json(buildSessionContext(stored, leafId)), `${where}, leaf ${leaf} (stored)`).toEqual(theirs);
      leaves++;
    }
  });
  expect(leaves).toBeGreaterThan(programs.length);
}

describe("differential against pi's own SessionManager and buildSessionContext", () => {
  it("pi 0.73.1: random trees, every leaf's context, the default leaf, labels and name", () => {
    differential("0.73.1", op, 150);
  });

  it("pi 1.6.0 (Node 22): random trees with pi 1.x's entries, every leaf's context", () => {
    differential("1.6.0", op1, 300);
  });
});
