/**
 * A first backup against a busy server: `pisync push` through a proxy that answers one request
 * in five 429 (some 503 and 507), with `Retry-After` as seconds, as a date, or missing, and
 * refuses again any request that comes back sooner than it said. Push ends with exit 0, every
 * file sent, every copy byte-exact, and never came back early. 400 files here; the same run at
 * 4,000 is `scripts/push-busy.ts`.
 */
import { pushThroughBusyServer } from "@pisync/testing/busy-push";
import { npmStartForFile } from "@pisync/testing/cli";
import { expect, it } from "vitest";

const server = npmStartForFile();

it("push of 400 files waits out 429, 503 and 507 as asked: exit 0, every file sent, bytes exact", async () => {
  const result = await pushThroughBusyServer(server, 400);
  expect(result.stderr).not.toContain('"event":"skipped"');
  expect(result.code, result.stderr.slice(-2000)).toBe(0);
  expect(result.summary).toMatchObject({ files: 400, failed: 0 });
  expect(result.mismatched).toEqual([]);
  expect(result.throttled).toBeGreaterThan(100);
  // Never sooner than the server said, and the waits of a second or more were announced.
  expect(result.early).toBe(0);
  expect(result.waits).toBeGreaterThanOrEqual(5);
}, 300_000);
