/**
 * The WebAssembly span scan against JSON.parse, its oracle: it must refuse exactly the lines
 * JSON.parse refuses, and for an accepted line each member the light index reads must be where
 * the span record says, holding what JSON.parse reads there (the last of a repeated key), with
 * the flags and links that line deserves. Checked on every line of the fixtures (changed at
 * random too) and on random entries; and across runs, in memory and read from a file.
 */
import { readFileSync } from "node:fs";
import { inRepoCorpus, loadCorpus, sharedCorpus } from "@pisync/testing/fixtures";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MEMBER, SPAN, SPAN_FLAG, SPAN_INTS, type SpanRun, spanScanner } from "../src/span-scan.js";
import { entry, mutate, mutation, respell } from "./line-arbitraries.js";

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();
const scanner = spanScanner();
const MEMBERS = Object.entries(MEMBER) as [keyof typeof MEMBER, number][];
const MESSAGE_MEMBERS: Record<string, string> = { role: "role", messageProvider: "provider", messageModel: "model" };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** Every run of bytes [start, end), its records and links copied out. */
function scanAll(bytes: Uint8Array, start = 0, end = bytes.length) {
  const runs: { offset: number; records: Int32Array; count: number; links: unknown[]; bytes: Uint8Array }[] = [];
  (scanner as NonNullable<typeof scanner>).scan(bytes, start, end, (run: SpanRun) => {
    runs.push({ ...run, records: run.records.slice(), bytes: run.bytes.slice() });
    return true;
  });
  return runs;
}

/** Checks one line (no newline in it) against JSON.parse; returns whether JSON.parse took it. */
function agrees(line: Uint8Array): boolean {
  const text = decoder.decode(line);
  let value: unknown;
  let valid = true;
  try {
    value = JSON.parse(text);
  } catch {
    valid = false;
  }
  const buffer = new Uint8Array(line.length + 1);
  buffer.set(line);
  buffer[line.length] = 0x0a;
  const [run] = scanAll(buffer);
  expect(run.count, text).toBe(1);
  const r = run.records;
  expect([r[SPAN.OFFSET], r[SPAN.LENGTH]]).toEqual([0, line.length]);
  expect(Boolean(r[SPAN.ACCEPTED]), text).toBe(valid);
  if (!valid) return false;
  expect(run.links.length, text).toBe(2);
  const flags = r[SPAN.FLAGS];
  if (!isObject(value)) {
    expect(flags & SPAN_FLAG.ENTRY, text).toBe(0);
    return true;
  }
  expect(flags & SPAN_FLAG.ENTRY, text).toBe(SPAN_FLAG.ENTRY);
  if (flags & SPAN_FLAG.WHOLE) {
    // Only a line with an escaped key is read whole (and nothing else of it is used).
    expect(text.includes("\\"), `read whole without an escape: ${text}`).toBe(true);
    return true;
  }
  expect(Boolean(flags & SPAN_FLAG.MESSAGE_OBJECT), text).toBe(isObject(value.message));
  const message = isObject(value.message) ? value.message : undefined;
  for (const [name, m] of MEMBERS) {
    const inMessage = MESSAGE_MEMBERS[name];
    const holder: Json | undefined = inMessage ? message : value;
    const key = inMessage ?? name;
    const start = r[SPAN.member(m)];
    const want = holder && Object.hasOwn(holder, key) ? holder[key] : undefined;
    if (want === undefined) {
      expect(start, `${name} absent in ${text}`).toBe(0);
      continue;
    }
    const span = decoder.decode(line.subarray(start, r[SPAN.member(m) + 1]));
    expect(JSON.parse(span), `${name} in ${text}`).toEqual(want);
  }
  const spelled = (m: number) => {
    const start = r[SPAN.member(m)];
    return !start || !/[\\\x80-\xff]/.test(String.fromCharCode(...line.subarray(start, r[SPAN.member(m) + 1])));
  };
  const odd =
    !spelled(MEMBER.type) ||
    (message !== undefined && !spelled(MEMBER.role)) ||
    (value.parentId !== undefined && value.parentId !== null && typeof value.parentId !== "string");
  expect(Boolean(flags & SPAN_FLAG.ODD), text).toBe(odd);
  expect(run.links, text).toEqual([value.id ?? null, value.parentId ?? null]);
  return true;
}

describe.runIf(scanner !== undefined)("the span scan", () => {
  it("agrees with JSON.parse on every line of the fixtures, and on each with bytes changed", () => {
    const files = [...loadCorpus(inRepoCorpus), ...loadCorpus(sharedCorpus)];
    let lines = 0;
    for (const file of files) {
      const bytes = readFileSync(file.jsonl);
      let start = 0;
      for (let end = bytes.indexOf(0x0a); end >= 0; start = end + 1, end = bytes.indexOf(0x0a, start)) {
        const line = bytes.subarray(start, end);
        agrees(line);
        fc.assert(
          fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (m) => void agrees(mutate(line, m))),
          { numRuns: 2 },
        );
        lines++;
      }
    }
    expect(lines).toBeGreaterThan(100);
  }, 90_000);

  it("gives each read member of random entries with repeated, escaped and odd fields", () => {
    let valid = 0;
    fc.assert(
      fc.property(entry, fc.nat(), fc.array(mutation, { maxLength: 2 }), (text, seed, mutations) => {
        if (agrees(mutate(encoder.encode(respell(text, seed)), mutations))) valid++;
      }),
      { numRuns: 3000 },
    );
    expect(valid).toBeGreaterThan(1000);
  });

  it("links a parentId written as the previous line's id as 0, within a run", () => {
    const lines = [
      '{"type":"message","id":"a","parentId":null}',
      '{"type":"message","id":"b","parentId":"a"}',
      '{"type":"message","id":"c","parentId":"a"}',
      '{"type":"message","id":"d","parentId":"c"}',
      '{"type":"message","id":"e","parentId":"\\u0064"}',
      "[1]",
      '{"type":"message","id":"f","parentId":"e"}',
      '{"type":"message","parentId":"f"}',
      '{"type":"message","id":"g","parentId":""}',
      '{"type":"message","id":"","parentId":"g"}',
      '{"type":"message","id":"h","parentId":""}',
    ];
    const [run] = scanAll(encoder.encode(`${lines.join("\n")}\n`));
    expect(run.links).toEqual([
      ...["a", null],
      ...["b", 0],
      ...["c", "a"],
      ...["d", 0],
      ...["e", "d"], // the same string, written otherwise: not the same bytes
      ...[null, null],
      ...["f", "e"], // the previous accepted line is not an entry: it has no id
      ...[null, 0],
      ...["g", ""],
      ...["", 0],
      ...["h", ""], // "" names no parent, even after an entry whose id is ""
    ]);
  });

  it("reads a file in runs as it reads the same bytes in memory: lines longer than a run, an unfinished last line", () => {
    const long = `{"type":"message","id":"x","parentId":"w","message":{"role":"user","content":"${"é".repeat(700_000)}"}}`;
    const small = Array.from({ length: 5000 }, (_, i) => `{"type":"label","id":"l${i}","parentId":"l${i - 1}"}`);
    const text = `${small.slice(0, 2500).join("\n")}\n${long}\n${small.slice(2500).join("\n")}\n${long}\n{"type":"mess`;
    const bytes = encoder.encode(text);
    const end = bytes.lastIndexOf(0x0a) + 1;
    const flat = (runs: ReturnType<typeof scanAll>) => {
      const records: number[][] = [];
      const links: unknown[] = [];
      for (const run of runs) {
        for (let i = 0; i < run.count; i++) {
          const record = [...run.records.subarray(i * SPAN_INTS, (i + 1) * SPAN_INTS)];
          record[SPAN.OFFSET] += run.offset;
          records.push(record);
        }
        links.push(...run.links);
      }
      return { records, links };
    };
    const inMemory = flat(scanAll(bytes, 0, end));
    const fromFile: ReturnType<typeof scanAll> = [];
    const read = (into: Uint8Array, at: number, length: number, position: number) => {
      // Short reads, as a file system may give them.
      const n = Math.min(length, 300_000, bytes.length - position);
      into.set(bytes.subarray(position, position + n), at);
      return Math.max(n, 0);
    };
    (scanner as NonNullable<typeof scanner>).scanFile(read, 0, bytes.length, (run) => {
      fromFile.push({ ...run, records: run.records.slice(), bytes: run.bytes.slice() });
      return true;
    });
    expect(inMemory.records.length).toBe(5002);
    // Runs break in other places: the links to a previous line differ at run starts only.
    const unmark = ({ records, links }: ReturnType<typeof flat>) => ({
      records,
      links: links.map((link, i) => (link === 0 ? links[i - 3] : link)),
    });
    expect(unmark(flat(fromFile))).toEqual(unmark(inMemory));
    expect(fromFile.at(-1)?.offset).toBeLessThan(end);
  });
});
