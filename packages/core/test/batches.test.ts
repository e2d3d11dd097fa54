/**
 * Reads a batch at a time: a share's downloads hold about one batch of a session at once,
 * however large the session, and see every line exactly once, in order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathTo } from "@pisync/format";
import type { BlobStore } from "@pisync/store";
import { embeddedStores } from "@pisync/store/embedded";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Appender, Reader } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-batches-"));
const stores = embeddedStores(dir);
/** The largest range one blob read fetched. */
let largestRead = 0;
const blobs: BlobStore = Object.create(stores.blobs);
blobs.get = async (key, range) => {
  const bytes = await stores.blobs.get(key, range);
  largestRead = Math.max(largestRead, bytes.length);
  return bytes;
};
const reader = new Reader({ blobs, meta: stores.meta });
const lines: string[] = [];

beforeAll(async () => {
  lines.push(
    JSON.stringify({ type: "session", version: 3, id: "big", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }),
  );
  for (let i = 0; i < 2000; i++) {
    const content = `message ${i} ${"x".repeat(i % 7 === 0 ? 3000 : 40)}`; // some lines far longer than others
    lines.push(
      JSON.stringify({
        type: "message",
        id: `m${i}`,
        parentId: i ? `m${i - 1}` : null,
        message: { role: "user", content },
      }),
    );
  }
  const body = new TextEncoder().encode(`${lines.join("\n")}\n`);
  const appender = new Appender(stores);
  // Many appends: many segments, so reads cross segment boundaries.
  let offset = 0;
  for (let k = 0; k < lines.length; k += 250) {
    const part = new TextEncoder().encode(`${lines.slice(k, k + 250).join("\n")}\n`);
    await appender.append({ userId: "u", sessionId: "big", offset, body: part });
    offset += part.length;
  }
  expect(offset).toBe(body.length);
});
afterAll(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

it("rawLines reads a chunk at a time, whatever the session's size, and gives every line once", async () => {
  const head = await reader.head("u", "big");
  expect(head.current.length).toBeGreaterThan(20 * 8192);
  largestRead = 0;
  const seen: string[] = [];
  let largestBatch = 0;
  for await (const batch of reader.rawLines("u", "big", head.current.generation, 8192)) {
    largestBatch = Math.max(
      largestBatch,
      batch.reduce((n, l) => n + l.length, 0),
    );
    seen.push(...batch);
  }
  expect(seen).toEqual(lines);
  expect(largestRead).toBeLessThanOrEqual(8192);
  expect(largestBatch).toBeLessThanOrEqual(8192 + 3100); // a chunk and the line it cut
});

it("batches hold about batchBytes of a path's lines at a time, in path order", async () => {
  const head = await reader.head("u", "big");
  const { index } = await reader.index(head, head.current);
  const path = pathTo(index, index.defaultLeaf as NonNullable<typeof index.defaultLeaf>).records;
  largestRead = 0;
  const seen: string[] = [];
  let batches = 0;
  for await (const batch of reader.batches(head, path, 8192)) {
    const bytes = batch.reduce((n, b) => n + b.record.length, 0);
    expect(bytes <= 8192 || batch.length === 1).toBe(true);
    seen.push(...batch.map((b) => b.text));
    batches++;
  }
  expect(seen).toEqual(lines.slice(1));
  expect(batches).toBeGreaterThan(20);
  expect(largestRead).toBeLessThanOrEqual(8192);
});
