/**
 * The WebAssembly span scan against JSON.parse, its oracle: it must refuse exactly the lines
 * JSON.parse refuses, and for an accepted line each member the light index reads must be where
 * the span record says, holding what JSON.parse reads there (the last of a repeated key), with
 * the flags and links that line deserves. Checked on every line of the fixtures (changed at
 * random too) and on random entries; and across runs, in memory and read from a file.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { KNOWN_NAMES } from "../src/light-index.js";
import { MEMBER, SPAN, SPAN_FLAG, SPAN_INTS, type SpanRun, spanScanner, textHash } from "../src/span-scan.js";
import { checkFixtureLines, checkRandomEntries } from "./line-arbitraries.js";

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();
const scanner = spanScanner();
const MEMBERS = Object.entries(MEMBER) as [keyof typeof MEMBER, number][];
const MESSAGE_MEMBERS: Record<string, string> = { role: "role", messageProvider: "provider", messageModel: "model" };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** Every run of bytes [start, end), its records copied out. */
function scanAll(bytes: Uint8Array, start = 0, end = bytes.length) {
  const runs: SpanRun[] = [];
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
  // What the light index reads: plain strings (ASCII, no escapes: their bytes are their text).
  const raw = (m: number) => {
    const start = r[SPAN.member(m)];
    return start ? line.subarray(start, r[SPAN.member(m) + 1]) : undefined;
  };
  const plain = (m: number) => {
    const bytes = raw(m);
    return bytes !== undefined && bytes[0] === 0x22 && !bytes.some((b) => b === 0x5c || b >= 0x80);
  };
  const parent = raw(MEMBER.parentId);
  const noParent = parent === undefined || parent[0] === 0x6e || (parent.length === 2 && parent[0] === 0x22);
  const role = message !== undefined && typeof message.role === "string";
  const odd =
    !plain(MEMBER.type) || !plain(MEMBER.id) || (!noParent && !plain(MEMBER.parentId)) || (role && !plain(MEMBER.role));
  expect(Boolean(flags & SPAN_FLAG.ODD), text).toBe(odd);
  expect(Boolean(flags & SPAN_FLAG.PARENT_NONE), text).toBe(noParent);
  expect(Boolean(flags & SPAN_FLAG.PARENT_PREVIOUS), text).toBe(false); // a run of one line
  expect(Boolean(flags & SPAN_FLAG.HAS_MESSAGE), text).toBe(value.message !== undefined && value.message !== null);
  if (!odd) {
    const code = (name: unknown) => KNOWN_NAMES.indexOf(name as string) + 1 || 255;
    expect([r[SPAN.ID_HASH], r[SPAN.ID_HASH + 1]], text).toEqual(textHash(value.id as string));
    if (!noParent)
      expect([r[SPAN.PARENT_HASH], r[SPAN.PARENT_HASH + 1]], text).toEqual(textHash(value.parentId as string));
    expect(r[SPAN.CODES] & 255, text).toBe(code(value.type));
    expect(r[SPAN.CODES] >> 8, text).toBe(role ? code(message.role) : 0);
  }
  return true;
}

describe.runIf(scanner !== undefined)("the span scan", () => {
  it("agrees with JSON.parse on every line of the fixtures, and on each with bytes changed", () => {
    expect(checkFixtureLines(agrees, 2)).toBeGreaterThan(100);
  }, 90_000);

  it("gives each read member of random entries with repeated, escaped and odd fields", () => {
    expect(checkRandomEntries(agrees)).toBeGreaterThan(1000);
  });

  it("marks a parent id written as the previous accepted line's id, within a run", () => {
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
    const marks = Array.from({ length: run.count }, (_, i) => {
      const flags = run.records[i * SPAN_INTS + SPAN.FLAGS];
      return flags & SPAN_FLAG.PARENT_PREVIOUS ? "previous" : flags & SPAN_FLAG.PARENT_NONE ? "none" : "";
    });
    expect(marks).toEqual([
      "none",
      "previous",
      "",
      "previous",
      "", // the same text, written otherwise: not the same bytes (and not plain)
      "none", // not an entry
      "", // the previous accepted line is not an entry: it has no id
      "previous",
      "none",
      "previous",
      "none", // "" names no parent, even after an entry whose id is ""
    ]);
  });

  it("codes the names the light index knows, as it lists them", () => {
    const source = readFileSync(new URL("../wasm/skeleton.c", import.meta.url), "utf8");
    const names = /NAMES\[\] = \{([^}]*)\}/
      .exec(source)?.[1]
      .match(/"[^"]*"/g)
      ?.map((n) => JSON.parse(n));
    expect(names).toEqual(KNOWN_NAMES);
  });

  it("reads a file in runs as it reads the same bytes in memory: lines longer than a run, an unfinished last line", () => {
    const long = `{"type":"message","id":"x","parentId":"w","message":{"role":"user","content":"${"é".repeat(700_000)}"}}`;
    const small = Array.from({ length: 5000 }, (_, i) => `{"type":"label","id":"l${i}","parentId":"l${i - 1}"}`);
    const text = `${small.slice(0, 2500).join("\n")}\n${long}\n${small.slice(2500).join("\n")}\n${long}\n{"type":"mess`;
    const bytes = encoder.encode(text);
    const end = bytes.lastIndexOf(0x0a) + 1;
    // The records with offsets in the file; the mark of a parent written as the previous line's id is left out (runs start elsewhere).
    const flat = (runs: SpanRun[]) =>
      runs.flatMap((run) =>
        Array.from({ length: run.count }, (_, i) => {
          const record = [...run.records.subarray(i * SPAN_INTS, (i + 1) * SPAN_INTS)];
          record[SPAN.OFFSET] += run.offset;
          record[SPAN.FLAGS] &= ~SPAN_FLAG.PARENT_PREVIOUS;
          return record;
        }),
      );
    const inMemory = flat(scanAll(bytes, 0, end));
    const fromFile: SpanRun[] = [];
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
    expect(inMemory.length).toBe(5002);
    expect(flat(fromFile)).toEqual(inMemory);
    expect(fromFile.at(-1)?.offset).toBeLessThan(end);
  });
});
