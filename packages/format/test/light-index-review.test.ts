/**
 * The light index against the full reading, on what broke it and what might: a long line after
 * short ones (a run laid over the links), a type written "", a first run of short lines (the
 * records' estimate), a file appended to after it was opened, the scanner's memory held by the
 * session; and hostile lines, runs of many lines, the edges of a file. `parseSession` and
 * `readSessionFile` must answer as `fullSession` does.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { readSessionFile } from "../src/file.js";
import { buildSessionContext, parseSession } from "../src/index.js";
import { fullSession } from "../src/parse.js";
import { lightOracle, short } from "./light-oracle.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-light-review-"));
mkdirSync(join(dir, "oracle"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const encoder = new TextEncoder();
const HEADER = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}';
const T = '"timestamp":"2026-01-01T00:00:01.000Z"';

/** A message entry line. */
const message = (id: string, parentId: string | null, text = "hi") =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: [{ type: "text", text }], timestamp: 1 },
  });

/** Checks a file's light readings against its full one; answers whether the light index read it. */
const check = lightOracle(join(dir, "oracle"));
const sameAsFull = (text: string) => check(encoder.encode(text));

describe("the light index, on files that broke it", () => {
  it("keeps its links when a later run is more than twice as long as the first (a long line after short ones)", () => {
    // The first run ends before the long line; the long line's run is laid over where the links were.
    const long = "x".repeat(2_500_000);
    const lines = [HEADER, message("a", null), message("b", "a"), message("c", "b", long), message("d", "a")];
    expect(sameAsFull(`${lines.join("\n")}\n`)).toBe(true);
  });

  it("reports an entry whose type is the empty string as the full reading does", () => {
    const lines = [
      HEADER,
      message("a", null),
      `{"type":"","id":"b","parentId":"a",${T}}`,
      // Its missing parent too, listed after it.
      `{"type":"","id":"c","parentId":"gone",${T}}`,
      message("d", "b"),
    ];
    expect(sameAsFull(`${lines.join("\n")}\n`)).toBe(true);
  });

  it("reserves span records in proportion to the lines read, not to a first run of short lines", () => {
    // 4096 short entries (a whole first run), then 20 MB in five long lines: the estimate from
    // the first run's lines per byte was a million entries (about 175 MB of records).
    const lines = [HEADER];
    for (let i = 0; i < 4096; i++) lines.push(`{"type":"x","id":"${i}"}`);
    const long = "y".repeat(4_000_000);
    for (let i = 0; i < 5; i++) lines.push(`{"type":"custom","id":"b${i}","parentId":"0","data":"${long}"}`);
    const bytes = encoder.encode(`${lines.join("\n")}\n`);
    const before = process.memoryUsage().arrayBuffers;
    const session = parseSession(bytes);
    const held = process.memoryUsage().arrayBuffers - before;
    expect(session.light).toBeDefined();
    expect(held).toBeLessThan(bytes.length);
  });

  it("answers from the file as it was opened when lines are appended after readSessionFile", () => {
    const path = join(dir, "appended.jsonl");
    const opened = `${[HEADER, message("a", null), message("b", "a")].join("\n")}\n{"type":"custom","id":"c","par`;
    writeFileSync(path, opened);
    const session = readSessionFile(path);
    expect(session.light).toBeDefined();
    // pi goes on writing: the unfinished line is completed, and a new one follows.
    appendFileSync(path, `entId":"b",${T}}\n${message("d", "c")}\n`);
    const full = fullSession(encoder.encode(opened));
    expect(session.leafId).toBe("b");
    expect(short(session.entries)).toEqual(short(full.entries));
    expect(session.index.records.map((r) => r.id)).toEqual(["a", "b"]);
    expect(short(buildSessionContext(session))).toEqual(short(buildSessionContext(full)));
  });

  it("reads hostile lines as the full reading does: respelled ids, repeated keys, odd values, CRLF", () => {
    const ids = ["a", "b", "", "null", "é", "a\\u0062", "x y"];
    /** A JSON value written as text, sometimes respelled (escapes, spaces) or of another type. */
    const raw = fc.oneof(
      fc.constantFrom(...ids).map((id) => `"${id}"`),
      fc.constantFrom("null", "1", "true", "[]", "{}", '"off"', '"high"', "1e400", "-0", '{"x":[1,{"role":"a"}]}'),
    );
    const member = fc.oneof(
      fc.tuple(
        fc.constantFrom("type"),
        fc.constantFrom(
          '"message"',
          '"messag"',
          '"message2"',
          '""',
          '"label"',
          '"compaction"',
          '"context_edit"',
          '"session_info"',
          '"thinking_level_change"',
          '"model_change"',
          '"custom"',
          '"m\\u0065ssage"',
        ),
      ),
      fc.tuple(
        fc.constantFrom("id", "parentId", "targetId", "firstKeptEntryId"),
        fc.oneof(raw, fc.constantFrom("PREVIOUS", "EARLIER", "NEXT")),
      ),
      fc.tuple(
        fc.constantFrom(
          "label",
          "name",
          "thinkingLevel",
          "provider",
          "modelId",
          "replacement",
          "retainedTail",
          "summary",
        ),
        raw,
      ),
      fc.tuple(
        fc.constantFrom("message"),
        fc.oneof(
          raw,
          fc
            .tuple(
              fc.constantFrom('"user"', '"assistant"', '"system"', '"toolResult"', '"us\\u0065r"', '"usér"', "1"),
              raw,
              fc.boolean(),
            )
            .map(
              ([role, content, twice]) =>
                `{"role":${twice ? '"user","role":' : ""}${role},"provider":"p","model":"m","content":${content}}`,
            ),
        ),
      ),
    );
    const entry = fc.record({
      members: fc.array(member, { maxLength: 8 }),
      crlf: fc.boolean(),
      space: fc.boolean(),
    });
    let light = 0;
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 10 }), (entries) => {
        const lines = [HEADER];
        entries.forEach(({ members, crlf, space }, n) => {
          const id = `"e${n}"`;
          // Links to the entries around this one: the previous line's, an earlier one's, the next one's.
          const links: Record<string, string> = {
            PREVIOUS: n ? `"e${n - 1}"` : "null",
            EARLIER: `"e${n >> 1}"`,
            NEXT: `"e${n + 1}"`,
          };
          const pick = (value: string) => links[value] ?? value;
          const parts = [
            `"type":"message"`,
            `"id":${id}`,
            `"message":{"role":"user","content":"hi"}`,
            ...members.map(([k, v]) => `"${k}":${pick(v)}`),
          ];
          const sep = space ? " , " : ",";
          lines.push(`{${parts.join(sep)}}${crlf ? "\r" : ""}`);
        });
        if (sameAsFull(`${lines.join("\n")}\n`)) light++;
      }),
      { numRuns: 500 },
    );
    // Both readings were exercised.
    expect(light).toBeGreaterThan(50);
    expect(light).toBeLessThan(450);
  }, 60_000);

  it("links across runs: long lines first, then more short lines than a run holds, parents and labels far back", () => {
    // The first 1 MB run holds a few long lines (the estimates are made from it); then 12,000
    // short entries (three runs of RUN_LINES), each linked to an entry far back, some missing.
    const lines = [HEADER];
    const long = "z".repeat(150_000);
    for (let i = 0; i < 8; i++) lines.push(message(`l${i}`, i ? `l${i - 1}` : null, long));
    let seed = 7;
    const next = () => {
      seed = (seed * 48271) % 2147483647;
      return seed;
    };
    for (let i = 0; i < 12_000; i++) {
      const parent = i === 0 ? "l7" : next() % 50 === 0 ? `gone${i}` : next() % 3 ? `s${i - 1}` : `s${next() % i}`;
      lines.push(
        i % 97 === 5
          ? `{"type":"label","id":"s${i}","parentId":"${parent}",${T},"targetId":"l${next() % 8}","label":"t${i}"}`
          : `{"type":"message","id":"s${i}","parentId":"${parent}",${T},"message":{"role":"user","content":"m${i}"}}`,
      );
      // Now and then a line that straddles the 1 MB run boundary.
      if (i % 2000 === 1999) lines.push(message(`big${i}`, `s${i}`, "w".repeat(700_000)));
    }
    expect(sameAsFull(`${lines.join("\n")}\n`)).toBe(true);
  }, 60_000);

  it("lets go of the scanner's memory once a file is read (it is as large as the file's longest line)", () => {
    v8.setFlagsFromString("--expose-gc");
    const collect = vm.runInNewContext("gc") as () => void;
    // A scanner's memory goes back to the system a collection or two after it is garbage.
    const gc = () => {
      for (let i = 0; i < 3; i++) collect();
    };
    // A 40 MB line, written a megabyte at a time (no large string of the test's own to collect meanwhile).
    const path = join(dir, "long-line.jsonl");
    writeFileSync(path, `${HEADER}\n{"type":"custom","id":"a","data":"`);
    const chunk = new Uint8Array(1_000_000).fill(0x79);
    for (let i = 0; i < 40; i++) appendFileSync(path, chunk);
    appendFileSync(path, `"}\n{"type":"custom","id":"b","parentId":"a",${T}}\n`);
    gc();
    const before = process.memoryUsage().rss;
    const session = readSessionFile(path);
    gc();
    expect(session.light?.entryOf("a")).toBe(0);
    expect(process.memoryUsage().rss - before).toBeLessThan(10_000_000);
  });

  it("reads the edges of a file as the full reading does: only a header, a header past the first 64 KB, CRLF, no last newline", () => {
    const bigHeader = HEADER.replace('"cwd":"/w"', `"cwd":"/${"w".repeat(70_000)}"`);
    const cases = [
      `${HEADER}\n`,
      HEADER,
      `${HEADER}\r\n${message("a", null)}\r\n${message("b", "a")}\r\n`,
      `${bigHeader}\n${message("a", null)}\n${message("b", "a")}\n`,
      `${HEADER}\n${message("a", null)}\n${message("b", "a")}`,
      `${HEADER}\n${message("a", null)}\n\n${message("b", "a")}\n`,
    ];
    expect(cases.map((text) => sameAsFull(text))).toEqual([true, false, true, true, true, false]);
  });
});
