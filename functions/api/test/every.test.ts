import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { every } from "../src/every.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it("runs a task that failed again after the retry delay, not a whole period later", async () => {
  const outcomes = [false, true];
  let runs = 0;
  const stop = every(
    3_600_000,
    true,
    async () => {
      runs++;
      return outcomes.shift() ?? true;
    },
    60_000,
  );
  await vi.advanceTimersByTimeAsync(0);
  expect(runs).toBe(1);
  await vi.advanceTimersByTimeAsync(59_000);
  expect(runs).toBe(1);
  await vi.advanceTimersByTimeAsync(1_000);
  expect(runs).toBe(2);
  // Succeeded: the next run is the period's.
  await vi.advanceTimersByTimeAsync(600_000);
  expect(runs).toBe(2);
  await vi.advanceTimersByTimeAsync(3_000_000);
  expect(runs).toBe(3);
  stop();
});

it("without a retry delay, or after a run that did not fail, keeps to the period; stop ends both", async () => {
  let runs = 0;
  const stop = every(1_000, false, async () => {
    runs++;
    return false;
  });
  await vi.advanceTimersByTimeAsync(2_500);
  expect(runs).toBe(2);
  stop();
  await vi.advanceTimersByTimeAsync(5_000);
  expect(runs).toBe(2);
});
