import { describe, expect, it } from "vitest";
import { planMerge } from "../src/aws/merge-plan.js";

describe("review: planMerge", () => {
  const base = { perChunk: 8, chunks: 10, covered: 10, denseShare: 0.5, maxKeptPages: 100 };
  it("counts a block given twice once (the doc of `patched` allows any iterable)", () => {
    // One page of chunk 1, given four times: not a dense chunk.
    const plan = planMerge({ ...base, patched: [9, 9, 9, 9] });
    expect(plan.kept).toEqual([10]);
    expect(plan.rewrite.size).toBe(0);
  });
  it("never keeps more than the cap, never keeps a page of a rewritten chunk, keeps every other patched page", () => {
    let seed = 1;
    const rnd = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
    for (let t = 0; t < 2000; t++) {
      const perChunk = 1 + Math.floor(rnd() * 8);
      const chunks = 1 + Math.floor(rnd() * 12);
      const covered = Math.floor(rnd() * (chunks + 1));
      const patched = new Set<number>();
      for (let k = Math.floor(rnd() * perChunk * chunks); k > 0; k--) patched.add(Math.floor(rnd() * perChunk * chunks));
      const maxKeptPages = Math.floor(rnd() * 10);
      const plan = planMerge({ perChunk, chunks, covered, patched, denseShare: 0.5, maxKeptPages });
      expect(plan.kept.length).toBeLessThanOrEqual(maxKeptPages);
      for (let c = covered; c < chunks; c++) expect(plan.rewrite.has(c)).toBe(true);
      for (const b of patched) {
        const c = Math.floor(b / perChunk);
        expect(plan.rewrite.has(c) !== plan.kept.includes(b + 1)).toBe(true);
      }
      for (const c of plan.rewrite) expect(c).toBeLessThan(chunks);
    }
  });
});
