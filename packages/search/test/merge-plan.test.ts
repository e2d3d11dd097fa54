import { describe, expect, it } from "vitest";
import { planMerge } from "../src/aws/merge-plan.js";

/** Blocks `from`..`from + count - 1`. */
const run = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe("a merge of a base's patches", () => {
  const base = { perChunk: 8, chunks: 10, covered: 10, denseShare: 0.5, maxKeptPages: 100 };

  it("rewrites the chunks at least half patched and keeps the scattered pages in one patch", () => {
    // Chunk 0: 5 of 8 pages patched; chunk 3: 4 of 8; chunks 5 and 9: one page each.
    const plan = planMerge({ ...base, patched: [...run(0, 5), ...run(24, 4), 41, 79] });
    expect([...plan.rewrite].sort((a, b) => a - b)).toEqual([0, 3]);
    expect(plan.kept).toEqual([42, 80]);
  });

  it("always rewrites the chunks the file grew into, and keeps none of their pages", () => {
    const plan = planMerge({ ...base, covered: 8, patched: [3, 64, 65, 79] });
    expect([...plan.rewrite].sort((a, b) => a - b)).toEqual([8, 9]);
    expect(plan.kept).toEqual([4]);
  });

  it("rewrites the most patched chunks, then the lower-numbered, until the kept pages fit", () => {
    // Three pages in chunk 2, two in each of chunks 4 and 6, one in chunk 7: eight pages, four may stay.
    const patched = [16, 18, 20, 33, 35, 49, 50, 60];
    const plan = planMerge({ ...base, maxKeptPages: 4, patched });
    expect([...plan.rewrite].sort((a, b) => a - b)).toEqual([2, 4]);
    expect(plan.kept).toEqual([50, 51, 61]);
    // The order the blocks come in changes nothing.
    expect(planMerge({ ...base, maxKeptPages: 4, patched: [...patched].reverse() })).toEqual(plan);
  });

  it("keeps a page patched twice once, and rewrites nothing when nothing is patched", () => {
    // Counted once too: four mentions of one page do not make its chunk half patched.
    const repeated = planMerge({ ...base, patched: [9, 9, 9, 9] });
    expect(repeated.kept).toEqual([10]);
    expect(repeated.rewrite.size).toBe(0);
    const none = planMerge({ ...base, patched: [] });
    expect(none.rewrite.size).toBe(0);
    expect(none.kept).toEqual([]);
  });
});
