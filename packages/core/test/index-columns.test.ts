/**
 * The columns of a persisted index give back the records they were made of, field for field, as
 * the index pages' JSON would: for every fixture session in the repository, and for records of
 * any shape (odd values, repeated and missing ids, parents after children, hostile keys).
 */
import { readFileSync } from "node:fs";
import { type LineRecord, parseSession } from "@pisync/format";
import { inRepoCorpus, loadCorpus } from "@pisync/testing/fixtures";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromColumns, toColumns } from "../src/index-columns.js";

/** What the records are once stored as JSON (the index pages' own form), without the build's fields. */
function stored(records: readonly object[]): LineRecord[] {
  return JSON.parse(JSON.stringify(records, (key, value) => (key === "index" || key === "v1" ? undefined : value)));
}

const roundTrip = (records: LineRecord[]) => fromColumns(JSON.parse(JSON.stringify(toColumns(records))));

/** JSON with every object's keys sorted, own keys only (`constructor` and `__proto__` are data here). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "undefined";
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
}

describe("index columns", () => {
  it("give back the records of every fixture session", () => {
    const fixtures = loadCorpus(inRepoCorpus);
    expect(fixtures.length).toBeGreaterThan(10);
    for (const fixture of fixtures) {
      const records = stored(parseSession(readFileSync(fixture.jsonl)).index.records);
      expect(canonical(roundTrip(records)), fixture.name).toBe(canonical(records));
    }
  });

  it("give back records of any shape", () => {
    const ids = fc.constantFrom("a", "b", "c", "__proto__", "constructor", "");
    const anything = fc.oneof(fc.jsonValue({ maxDepth: 2 }), ids);
    const record = fc.record(
      {
        line: fc.nat(),
        offset: fc.nat(),
        length: fc.nat(),
        value: fc.oneof(fc.nat(), anything),
        isObject: fc.oneof(fc.boolean(), anything),
        type: fc.oneof(fc.constantFrom("message", "label"), anything),
        id: fc.oneof(ids, anything),
        parentId: fc.oneof(fc.constant(null), ids, anything),
        timestamp: fc.oneof(fc.string(), anything),
        role: fc.oneof(fc.constantFrom("user", "assistant"), anything),
        facts: fc.oneof(fc.dictionary(fc.oneof(fc.string(), ids), anything), anything),
        __proto__: anything,
        extra: anything,
      },
      { requiredKeys: ["line", "offset", "length", "value", "isObject", "parentId"] },
    );
    fc.assert(
      fc.property(fc.array(record, { maxLength: 30 }), (records) => {
        const expected = stored(records);
        expect(canonical(roundTrip(expected))).toBe(canonical(expected));
      }),
      { numRuns: 300 },
    );
  });

  it("refuse columns that do not hold together", () => {
    const columns = toColumns(stored(parseSession(readFileSync(loadCorpus(inRepoCorpus)[0]!.jsonl)).index.records));
    expect(fromColumns({ ...columns, offset: columns.offset.slice(1) })).toBeUndefined();
    expect(fromColumns({ ...columns, parent: columns.parent.map((_, i) => i + 1) })).toBeUndefined();
  });
});
