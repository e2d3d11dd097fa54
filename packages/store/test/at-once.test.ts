/** The bounded worker pool every parallel batch runs on. */
import { describe, expect, it } from "vitest";
import { eachAtOnce } from "../src/index.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("eachAtOnce", () => {
  it("runs every item, at most `width` at once", async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await eachAtOnce([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      most = Math.max(most, ++running);
      await tick();
      running--;
      done.push(n);
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it("after a failure starts nothing more, and rejects only once the running ones ended", async () => {
    const started: number[] = [];
    let slowEnded = false;
    const run = eachAtOnce([1, 2, 3, 4, 5, 6], 2, async (n) => {
      started.push(n);
      if (n === 1) {
        await tick();
        await tick();
        slowEnded = true;
      } else if (n === 2) throw new Error("item 2 failed");
    });
    await expect(run).rejects.toThrow("item 2 failed");
    expect(slowEnded).toBe(true); // the slow item ended before the caller went on
    expect(started).toEqual([1, 2]);
  });
});
