import type { LineRecord } from "@pisync/format";
import type { Segment } from "@pisync/store";
import { describe, expect, it } from "vitest";
import { rangesToRead } from "../src/read-plan.js";

/** Records of lines of 9 bytes (+ newline): line i at offset 10·i. */
const rec = (i: number): LineRecord => ({
  line: i + 1,
  offset: i * 10,
  length: 9,
  value: i,
  isObject: true,
  parentId: null,
});
const segments: Segment[] = [
  { key: "a", start: 0, end: 500 },
  { key: "b", start: 500, end: 1000 },
];

describe("which bytes a read fetches", () => {
  it("reads only the wanted lines: one GET per run of adjacent ones", () => {
    const wanted = [0, 1, 2, 7, 8, 60, 61].map(rec);
    const ranges = rangesToRead(wanted, segments, 10);
    expect(ranges.map((r) => [r.segment.key, r.start, r.end])).toEqual([
      ["a", 0, 29],
      ["a", 70, 89],
      ["b", 600, 619],
    ]);
  });

  it("merges the closest runs when there would be more GETs than the budget", () => {
    const wanted = [0, 2, 4, 30, 60, 62].map(rec);
    const ranges = rangesToRead(wanted, segments, 3);
    expect(ranges).toHaveLength(3);
    expect(ranges.map((r) => [r.segment.key, r.start, r.end])).toEqual([
      ["a", 0, 49],
      ["a", 300, 309],
      ["b", 600, 629],
    ]);
    expect(ranges.flatMap((r) => r.records.map((x) => x.line))).toEqual([1, 3, 5, 31, 61, 63]);
  });
});
