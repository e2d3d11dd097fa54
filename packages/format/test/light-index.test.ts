/**
 * The light index against the full reading, its oracle: for every file, `parseSession` (light
 * where it can) and `readSessionFile` (from disk) must answer exactly as the full tree index
 * does: header, version, default leaf, labels, name, problems, and the context of every leaf
 * with what it reports. Checked on the fixtures and on random sessions with everything that
 * sends a file to the full reading (and everything that does not).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inRepoCorpus, loadCorpus, sharedCorpus } from "@pisync/testing/fixtures";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { lightOracle } from "./light-oracle.js";
import { TYPES } from "./line-arbitraries.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-light-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const encoder = new TextEncoder();

/** Checks a file's light readings against its full one; answers whether the light index read it. */
const sameAsFull = lightOracle(dir);

describe("the light index", () => {
  it("reads every fixture as the full reading does, and reads pi's own files itself", () => {
    const fixtures = [...loadCorpus(inRepoCorpus), ...loadCorpus(sharedCorpus)];
    let light = 0;
    for (const fixture of fixtures) if (sameAsFull(readFileSync(fixture.jsonl))) light++;
    // Most fixtures are clean files pi wrote; the rest are the broken ones, read in full.
    expect(light).toBeGreaterThan(fixtures.length / 2);
    expect(light).toBeLessThan(fixtures.length);
  }, 60_000);

  it("reads files of many runs as the full reading does: lines longer than a run, links to early entries, more entries than the first run suggests", () => {
    const header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}';
    const message = (id: string, parent: string | null, text: string) =>
      JSON.stringify({
        type: "message",
        id,
        parentId: parent,
        timestamp: "2026-01-01T00:00:01.000Z",
        message: { role: "user", content: [{ type: "text", text }] },
      });
    const lines = [header];
    // A first run of a few long lines (the table is sized from it), then thousands of short ones.
    for (let i = 0; i < 8; i++) lines.push(message(`e${i}`, i ? `e${i - 1}` : null, "x".repeat(150_000)));
    for (let i = 8; i < 12_000; i++) {
      // Now and then a branch from one of the first entries (a link by hash to the start of the table).
      const parent = i % 1000 === 0 ? `e${i % 7}` : `e${i - 1}`;
      lines.push(message(`e${i}`, parent, i === 6000 ? "y".repeat(3_000_000) : `turn ${i}`));
    }
    lines.push(message("last", "e3", "the end"));
    const bytes = encoder.encode(`${lines.join("\n")}\n`);
    expect(sameAsFull(bytes)).toBe(true);
  }, 60_000);

  const ids = ["a", "b", "c", "d", "e", "é", 'q"q', "0", ""];
  const value = fc.oneof(fc.constantFrom(null, 1, "", "x", "off", "high", [], {}), fc.string({ maxLength: 4 }));
  /** Mostly what pi writes; now and then what sends a file to the full reading. */
  const often = <T>(usual: T[], rare: T[]) =>
    fc.oneof({ weight: 30, arbitrary: fc.constantFrom(...usual) }, { weight: 1, arbitrary: fc.constantFrom(...rare) });
  /** One line: an entry of a random type, linked to a random parent, or something that is not one. */
  const line = fc.oneof(
    {
      weight: 60,
      arbitrary: fc.record({
        // The types pi writes (message twice as often), and the two that send a file to the full reading.
        type: often([...TYPES, "message", "context_edit", "usage"], ["b\\u0061d", "session"]),
        id: often<string | undefined>(ids, [undefined]),
        parentId: fc.oneof(
          { weight: 6, arbitrary: fc.constant("previous") },
          { weight: 4, arbitrary: often<unknown>([...ids, null, undefined], [7]) },
        ),
        role: often(["user", "assistant", "system", "toolResult", "custom", undefined], ["od\\u0064"]),
        message: fc.constantFrom("object", "object", "null", "missing", "string"),
        facts: fc.record(
          {
            targetId: fc.constantFrom(...ids),
            label: value,
            name: value,
            thinkingLevel: value,
            provider: value,
            modelId: value,
            firstKeptEntryId: fc.constantFrom(...ids),
          },
          { requiredKeys: [] },
        ),
        repeated: fc.boolean(),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("", "[1]", "null", "{", '{"type":"message"', '{"\\u0074ype":"label","id":"z"}'),
    },
  );
  /** A session: a header (v3, or something else now and then), lines, maybe an unfinished last one. */
  const session = fc.record({
    header: fc.constantFrom(
      ...Array(12).fill('{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'),
      '{"type":"session","version":2,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
      '\uFEFF{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
      '{"type":"title","title":"t"}\n{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
    ),
    lines: fc.array(line, { maxLength: 14 }),
    tail: fc.constantFrom("", "", "", '{"type":"message","id":"t"'),
  });

  function write(header: string, lines: unknown[], tail: string): string {
    const out = [header];
    let previous: string | undefined;
    let n = 0;
    for (const l of lines) {
      if (typeof l === "string") {
        out.push(l);
        continue;
      }
      const { type, id, parentId, role, message, facts, repeated } = l as {
        repeated: boolean;
        type: string;
        id: string | undefined;
        parentId: unknown;
        role: string | undefined;
        message: string;
        facts: Record<string, unknown>;
      };
      const parts = [`"type":"${type}"`];
      // Unique ids mostly; a repeated one now and then (ids are drawn from a small set).
      const own = id === undefined ? undefined : repeated && n % 8 === 0 ? id : `${id}${n}`;
      n++;
      if (own !== undefined) parts.push(`"id":${JSON.stringify(own)}`);
      const parent = parentId === "previous" ? previous : parentId;
      if (parent !== undefined) parts.push(`"parentId":${JSON.stringify(parent)}`);
      parts.push('"timestamp":"2026-01-01T00:00:01.000Z"');
      for (const [k, v] of Object.entries(facts)) parts.push(`${JSON.stringify(k)}:${JSON.stringify(v)}`);
      if (type === "message" && message !== "missing") {
        const roleText = role === undefined ? "" : `"role":"${role}",`;
        parts.push(
          message === "object"
            ? `"message":{${roleText}"provider":"p","model":"m","content":[{"type":"text","text":"hi"}]}`
            : message === "null"
              ? '"message":null'
              : '"message":"text"',
        );
      }
      if (type === "context_edit") parts.push('"replacement":{"content":"edited"}');
      if (type === "compaction") parts.push('"summary":"s","tokensBefore":1');
      out.push(`{${parts.join(",")}}`);
      previous = own;
    }
    return `${out.join("\n")}\n${tail}`;
  }

  it("reads random sessions as the full reading does, and leaves to it the files it cannot read as pi does", () => {
    let light = 0;
    const runs = 400;
    fc.assert(
      fc.property(session, ({ header, lines, tail }) => {
        if (sameAsFull(encoder.encode(write(header, lines, tail)))) light++;
      }),
      { numRuns: runs },
    );
    // Both readings were exercised.
    expect(light).toBeGreaterThan(runs / 10);
    expect(light).toBeLessThan(runs * 0.9);
  }, 60_000);
});
