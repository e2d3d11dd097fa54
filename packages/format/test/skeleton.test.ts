/**
 * The WebAssembly skeleton scan against JSON.parse, its oracle: it must refuse exactly the lines
 * JSON.parse refuses, and the skeleton of an accepted line must give the same record. Checked
 * on every line of the fixtures, on random JSON and entries (duplicate and escaped keys, odd
 * values in the fields the index reads), and on those lines with bytes changed at random.
 */
import { readFileSync } from "node:fs";
import { inRepoCorpus, loadCorpus, sharedCorpus } from "@pisync/testing/fixtures";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { indexSession } from "../src/index-scan.js";
import { recordOf } from "../src/lines.js";
import { NOT_JSON, skeletonScanner } from "../src/skeleton.js";
import { SKELETON_WASM } from "../src/skeleton-wasm.js";
import {
  checkFixtureLines,
  checkRandomEntries,
  entry,
  jsonValue,
  mutate,
  mutation,
  respell,
  TYPES,
} from "./line-arbitraries.js";

const scanner = skeletonScanner();
/** The scan's value of one line (no newline in it), given as a run of its own inside a larger buffer. */
const read =
  scanner &&
  ((line: Uint8Array): unknown => {
    const buffer = new Uint8Array(line.length + 7);
    buffer.set(line, 3);
    buffer[3 + line.length] = 0x0a;
    const seen: [number, number, unknown][] = [];
    scanner.scan(buffer, 3, 4 + line.length, (offset, length, value) => seen.push([offset, length, value]));
    // One line, where it was given (checked cheaply: this runs for every line of the corpora).
    if (seen.length !== 1 || seen[0][0] !== 3 || seen[0][1] !== line.length) {
      expect(seen.map(([offset, length]) => [offset, length])).toEqual([[3, line.length]]);
    }
    return seen[0][2];
  });
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

/** Checks one line (no newline in it) against JSON.parse; returns whether JSON.parse took it. */
function agrees(line: Uint8Array): boolean {
  let expected: unknown;
  let valid = true;
  try {
    expected = JSON.parse(decoder.decode(line));
  } catch {
    valid = false;
  }
  const value = (read as NonNullable<typeof read>)(line);
  if (!valid) {
    expect(value, decoder.decode(line)).toBe(NOT_JSON);
    return false;
  }
  expect(value, decoder.decode(line)).not.toBe(NOT_JSON);
  const span = { line: 1, offset: 0, length: line.length };
  expect(recordOf(span, value, 0), decoder.decode(line)).toEqual(recordOf(span, expected, 0));
  if (expected === null || typeof expected !== "object" || Array.isArray(expected)) expect(value).toEqual(expected);
  return true;
}

describe.runIf(read !== undefined)("the skeleton scan", () => {
  it("agrees with JSON.parse on every line of the fixtures, and on each with bytes changed", () => {
    expect(checkFixtureLines(agrees, 5)).toBeGreaterThan(100);
  }, 90_000);

  it("agrees with JSON.parse on random JSON, spaced and respelled", () => {
    fc.assert(
      fc.property(jsonValue, fc.nat(), (value, seed) => {
        agrees(encoder.encode(respell(JSON.stringify(value), seed)));
      }),
      { numRuns: 2000 },
    );
  });

  it("gives the record of the whole line for entries with repeated, escaped and odd fields", () => {
    expect(checkRandomEntries(agrees)).toBeGreaterThan(1000);
  });

  it("refuses what JSON.parse refuses, byte for byte", () => {
    const cases = [
      "",
      "   ",
      "{",
      "}",
      '{"a":1,}',
      "[1,]",
      '{"a" 1}',
      "01",
      "-",
      "1.",
      ".5",
      "1e",
      "1e+",
      "+1",
      "tru",
      "nul",
      "truex",
      '"\\x"',
      '"\\u12G4"',
      '"\\u123"',
      '"a\tb"',
      '"a\u007fb"',
      '{"a":"b"} x',
      '{"a":"b"}}',
      "[[[]]",
      "\uFEFF{}",
      '{"a":NaN}',
      '{"a":Infinity}',
      "'a'",
      "{a:1}",
      '"\uD800"',
      '"\\uD800"',
      "1 2",
      '{"type":"message","id":"a"}{"type":"message","id":"b"}',
    ];
    for (const text of cases) agrees(encoder.encode(text));
    // Bytes that are not UTF-8: text to JSON.parse inside a string, an error outside one.
    agrees(new Uint8Array([0x22, 0xff, 0xc3, 0x28, 0xe2, 0x82, 0x22]));
    agrees(new Uint8Array([0x7b, 0xff, 0x7d]));
  });

  it("reads a session to the same index with and without it", () => {
    for (const file of [...loadCorpus(inRepoCorpus), ...loadCorpus(sharedCorpus)]) {
      const bytes = readFileSync(file.jsonl);
      const fast = indexSession(bytes);
      const whole = indexSession(bytes, { wholeLines: true });
      expect(fast.records, file.name).toEqual(whole.records);
      expect(fast.problems, file.name).toEqual(whole.problems);
      expect(fast.defaultLeafId).toBe(whole.defaultLeafId);
      const leaf = fast.defaultLeaf;
      if (leaf) expect(fast.entry(leaf)).toEqual(whole.entry(leaf));
    }
  });
});

describe.runIf(read !== undefined)("reading a file a run of lines at a time", () => {
  it("gives the index of reading every line whole, across runs, with refused and blank lines among them", () => {
    const header = JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/" });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(entry, fc.nat(), fc.array(mutation, { maxLength: 1 })), { minLength: 200, maxLength: 700 }),
        fc.boolean(),
        (lines, bom) => {
          const text = lines.map(([line, seed, m]) => decoder.decode(mutate(encoder.encode(respell(line, seed)), m)));
          const bytes = encoder.encode(`${bom ? "\uFEFF" : ""}${header}\n${text.join("\n")}\n\n  \n`);
          const fast = indexSession(bytes);
          const whole = indexSession(bytes, { wholeLines: true });
          expect(fast.records).toEqual(whole.records);
          expect(fast.problems).toEqual(whole.problems);
          expect(fast.header).toEqual(whole.header);
        },
      ),
      { numRuns: 15 },
    );
  });

  it("reads lines longer than a run's byte budget", () => {
    const big = (id: string, parentId: string | null) =>
      JSON.stringify({
        type: "message",
        id,
        parentId,
        timestamp: "t",
        message: { role: "user", content: "x".repeat(5_000_000) },
      });
    const bytes = encoder.encode(
      `${big("a", null)}\n${big("b", "a")}\n{"type":"label","id":"c","parentId":"b","timestamp":"t","targetId":"a","label":"l"}\n`,
    );
    const fast = indexSession(bytes);
    expect(fast.records).toEqual(indexSession(bytes, { wholeLines: true }).records);
    expect(fast.records.map((r) => r.id)).toEqual(["a", "b", "c"]);
  });
});

describe.runIf(read !== undefined)("the scan's framing and runs", () => {
  const header = JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/" });
  const entry = (id: string, parentId: string | null, text = "x") =>
    JSON.stringify({ type: "message", id, parentId, timestamp: "t", message: { role: "user", content: text } });

  /** Indexes `text` with and without the scan; both must agree, and the scan's index is returned. */
  const both = (text: string) => {
    const bytes = encoder.encode(text);
    const fast = indexSession(bytes);
    const whole = indexSession(bytes, { wholeLines: true });
    expect(fast.records).toEqual(whole.records);
    expect(fast.problems).toEqual(whole.problems);
    return fast;
  };

  it("reads ids with escapes and letters beyond ASCII as JSON.parse does", () => {
    const ids = ['a"b', "été", "\u{1F600}", "tab\there", "\u2028", "a".repeat(200), "\\u0041"];
    const lines = ids.map((id, i) => entry(id, i ? ids[i - 1] : null));
    // The same ids spelled with \u escapes.
    lines.push(`{"type":"message","id":"\\u00e9t\\u00e9","parentId":"\\ud83d\\ude00","timestamp":"t","message":{}}`);
    const index = both(`${header}\n${lines.join("\n")}\n`);
    expect(index.records.map((r) => r.id)).toEqual([...ids, "été"]);
    expect(index.records.map((r) => r.parentId)).toEqual([null, ...ids.slice(0, -1), "\u{1F600}"]);
  });

  it("ends lines at LF only: CRLF, spaces around a value, U+2028 inside one", () => {
    const index = both(
      `${header}\r\n  ${entry("a", null)} \t\r\n${entry("b", "a", "line\u2028sep")}\n\r\n${entry("c", "b")}\r\r\n`,
    );
    expect(index.records.map((r) => r.id)).toEqual(["a", "b", "c"]);
    expect(index.records.map((r) => r.line)).toEqual([2, 3, 5]);
  });

  it("reads files of more lines and bytes than one run takes, with huge and broken lines among them", () => {
    const lines: string[] = [header];
    let parent: string | null = null;
    for (let i = 0; i < 9_000; i++) {
      const id = `e${i}`;
      if (i % 1000 === 7) lines.push("{not json", "", "  ", "null", "[1,2]");
      const text = i % 3000 === 5 ? "y".repeat(1_500_000) : `text ${i} ${"z".repeat(i % 100)}`;
      lines.push(entry(id, parent, text));
      parent = id;
    }
    const index = both(`${lines.join("\n")}\n`);
    expect(index.records.filter((r) => r.isObject)).toHaveLength(9_000);
    expect(index.defaultLeafId).toBe("e8999");
    expect(index.problems.map((p) => p.kind)).toContain("invalid-json");
  });
});

it("skips a line that starts with a byte order mark past the first, as pi does", () => {
  const header = JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/" });
  const entry = (id: string, parentId: string | null) =>
    JSON.stringify({ type: "message", id, parentId, timestamp: "t", message: { role: "user", content: id } });
  const bytes = encoder.encode(`\uFEFF${header}\n${entry("a", null)}\n\uFEFF${entry("b", "a")}\n`);
  for (const options of [{}, { wholeLines: true }]) {
    const index = indexSession(bytes, options);
    expect(index.header?.id).toBe("s");
    expect(index.records.map((r) => r.id)).toEqual(["a"]);
    expect(index.problems.map((p) => p.line)).toEqual([3]);
  }
});

it("keeps every member the records read (the C lists match recordOf)", () => {
  const source = readFileSync(new URL("../wasm/skeleton.c", import.meta.url), "utf8");
  const list = (name: string) =>
    new Set(
      [...(new RegExp(`${name}\\[\\] = \\{([^}]*)\\}`).exec(source)?.[1] ?? "").matchAll(/"(\w+)"/g)].map((m) => m[1]),
    );
  const entryFields = new Set([...list("ENTRY_FIELDS"), "message", "retainedTail"]);
  const messageFields = list("MESSAGE_FIELDS");
  const readKeys = (target: Record<string, unknown>, into: Set<string>) =>
    new Proxy(target, {
      get(t, key) {
        if (typeof key === "string") into.add(key);
        return Reflect.get(t, key);
      },
    });
  const entryReads = new Set<string>();
  const messageReads = new Set<string>();
  for (const type of [...TYPES, "branch_summary", "custom_message", "session"]) {
    const entry = readKeys({ type, id: "a", message: readKeys({ role: "user" }, messageReads) }, entryReads);
    recordOf({ line: 1, offset: 0, length: 1 }, entry, 0);
  }
  expect([...entryReads].filter((k) => !entryFields.has(k))).toEqual([]);
  expect([...messageReads].filter((k) => !messageFields.has(k))).toEqual([]);
  expect(entryReads.size).toBeGreaterThan(10);
});

it("stays under 4 KB, the most a browser compiles synchronously on its main thread", () => {
  expect(Buffer.from(SKELETON_WASM, "base64").length).toBeLessThanOrEqual(4096);
});
