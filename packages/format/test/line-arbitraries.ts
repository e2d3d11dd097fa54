/**
 * Random lines for the scans' tests (skeleton.test.ts, span-scan.test.ts): pi-like entries whose
 * members the index reads hold any values, repeated, respelled with escapes, next to bulky ones;
 * and byte mutations that turn lines into what JSON.parse refuses.
 */
import { readFileSync } from "node:fs";
import { inRepoCorpus, loadCorpus, sharedCorpus } from "@pisync/testing/fixtures";
import fc from "fast-check";

const FIELDS = [
  "type",
  "id",
  "parentId",
  "timestamp",
  "targetId",
  "label",
  "name",
  "thinkingLevel",
  "provider",
  "modelId",
  "firstKeptEntryId",
  "firstKeptEntryIndex",
  "retainedTail",
  "summary",
  "content",
];
const MESSAGE_FIELDS = ["role", "provider", "model", "content", "usage", "timestamp"];
export const jsonValue = fc.jsonValue({ maxDepth: 3 });
const longText = fc.string({ unit: "binary", minLength: 0, maxLength: 300 });
export const TYPES = [
  "message",
  "label",
  "session_info",
  "thinking_level_change",
  "model_change",
  "compaction",
  "custom",
];
const anyValue = fc.oneof(
  jsonValue,
  longText,
  fc.constantFrom(null, "assistant", [], {}, ...TYPES),
  fc.constantFrom(...TYPES),
);

/** A message member: an object with the fields the index reads and others, or any value. */
const message = fc.oneof(
  fc
    .array(fc.tuple(fc.constantFrom(...MESSAGE_FIELDS), anyValue), { maxLength: 8 })
    .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`),
  anyValue.map((v) => JSON.stringify(v)),
);

/** pi-like entries: the index's fields with any values, repeated (messages too), next to bulky ones. */
export const entry = fc
  .tuple(
    fc.array(fc.tuple(fc.constantFrom(...FIELDS), anyValue), { maxLength: 12 }),
    fc.array(fc.tuple(message, fc.nat()), { maxLength: 2 }),
  )
  .map(([members, messages]) => {
    const parts = members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
    for (const [value, at] of messages) parts.splice(at % (parts.length + 1), 0, `"message":${value}`);
    return `{${parts.join(",")}}`;
  });

/** Keys spelled with escapes, and spaces where JSON allows them. */
export function respell(text: string, seed: number): string {
  return text
    .replace(/"(id|role|type|message|parentId)":/g, (m, key: string) =>
      seed % 3 === 0 ? `"\\u00${key.charCodeAt(0).toString(16)}${key.slice(1)}":` : m,
    )
    .replace(/([,:[{])/g, (m) => (seed % 2 === 0 ? `${m} \t` : m));
}

const INTERESTING = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x30, 0x31, 0x2d, 0x2e, 0x65, 0x45, 0x2b, 0x20];
export const mutation = fc.tuple(
  fc.nat(),
  fc.constantFrom("set", "insert", "delete"),
  fc.oneof(fc.constantFrom(...INTERESTING), fc.integer({ min: 0, max: 255 })),
);

export function mutate(bytes: Uint8Array, mutations: [number, string, number][]): Uint8Array {
  let out = [...bytes];
  for (const [at, kind, byte] of mutations) {
    if (byte === 0x0a) continue; // a newline ends a line: never inside one
    const i = out.length ? at % (out.length + (kind === "insert" ? 1 : 0)) : 0;
    if (kind === "set" && out.length) out[i] = byte;
    else if (kind === "insert") out.splice(i, 0, byte);
    else if (out.length) out.splice(i, 1);
  }
  out = out.filter((b) => b !== 0x0a);
  return new Uint8Array(out);
}

/** A scan's check of one line (no newline in it) against JSON.parse: whether JSON.parse took it. */
export type LineCheck = (line: Uint8Array) => boolean;

/**
 * Checks every line of the fixtures, and `mutatedRuns` copies of each with bytes changed at
 * random; returns how many fixture lines there were.
 */
export function checkFixtureLines(agrees: LineCheck, mutatedRuns: number): number {
  let lines = 0;
  for (const file of [...loadCorpus(inRepoCorpus), ...loadCorpus(sharedCorpus)]) {
    const bytes = readFileSync(file.jsonl);
    let start = 0;
    for (let end = bytes.indexOf(0x0a); end >= 0; start = end + 1, end = bytes.indexOf(0x0a, start)) {
      const line = bytes.subarray(start, end);
      agrees(line);
      fc.assert(
        fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (m) => void agrees(mutate(line, m))),
        { numRuns: mutatedRuns },
      );
      lines++;
    }
  }
  return lines;
}

/** Checks 3,000 random entries, respelled and with bytes changed; returns how many JSON.parse took. */
export function checkRandomEntries(agrees: LineCheck): number {
  const encoder = new TextEncoder();
  let valid = 0;
  fc.assert(
    fc.property(entry, fc.nat(), fc.array(mutation, { maxLength: 2 }), (text, seed, mutations) => {
      if (agrees(mutate(encoder.encode(respell(text, seed)), mutations))) valid++;
    }),
    { numRuns: 3000 },
  );
  return valid;
}
