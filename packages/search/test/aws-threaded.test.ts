/**
 * The AWS index with its searches on threads ({@link ThreadedS3SearchIndex}) keeps the search
 * contract: every write on the owning thread is seen by the next search on a thread.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedLines } from "@pisync/core";
import { type BlobStore, StorageUnavailableError } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { headSeq } from "../src/aws/pointers.js";
import { S3SearchIndex } from "../src/aws/s3-search-index.js";
import { ThreadedS3SearchIndex } from "../src/aws/threaded.js";
import { parseQuery } from "../src/index.js";
import { DEFAULT_SEARCH_THREADS } from "../src/search-threads.js";
import { describeSearchContract, type SearchFixture } from "./contract.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-search-aws-threaded-"));
let fixture: SearchFixture & { index: ThreadedS3SearchIndex };

beforeAll(async () => {
  const config = await testAwsConfig();
  const stores = awsStores(config);
  const index = new ThreadedS3SearchIndex({
    connection: config,
    table: config.table,
    blobs: stores.blobs,
    lines: storedLines(stores),
    cacheDir: dir,
  });
  // The threads start (and load the code) before the first search's time limit counts.
  await index.warm();
  fixture = { index, stores };
}, 60_000);
afterAll(async () => {
  await fixture?.index.close();
  rmSync(dir, { recursive: true, force: true });
});

describeSearchContract("aws, searched on threads", async () => fixture);

describe("a search on a thread while the bucket does not answer", () => {
  it("fails as the store's outage (a 503), not as a crash, and answers once it is back", async () => {
    const config = await testAwsConfig();
    const stores = awsStores(config);
    let down = false;
    const real = stores.blobs;
    const blobs: BlobStore = {
      put: (key, body) => real.put(key, body),
      get: async (key, range) => {
        if (down) throw new StorageUnavailableError("the bucket did not answer");
        return real.get(key, range);
      },
      delete: (keys) => real.delete(keys),
      list: (prefix) => real.list(prefix),
      listObjects: (prefix) => real.listObjects(prefix),
      uploadUrl: (key, expires, max) => real.uploadUrl(key, expires, max),
    };
    const index = new ThreadedS3SearchIndex(
      { connection: config, table: config.table, blobs, lines: storedLines(stores), cacheDir: join(dir, "outage") },
      { ...DEFAULT_SEARCH_THREADS, threads: 1 },
    );
    try {
      await index.warm();
      const userId = `outage-${Date.now()}`;
      const doc = { entryId: "e1", kind: "user" as const, role: "user" as const, text: "a grebe", time: 1 };
      await index.apply({ userId, sessionId: "s1", generation: 1, from: 0, to: 10, documents: [doc], labels: {} });
      down = true;
      await expect(index.search(userId, parseQuery("grebe"), { limit: 5 })).rejects.toThrow(StorageUnavailableError);
      down = false;
      const page = await index.search(userId, parseQuery("grebe"), { limit: 5 });
      expect(page.sessions.map((s) => s.sessionId)).toEqual(["s1"]);
    } finally {
      await index.close();
    }
  }, 60_000);
});

describe("a thread's copy far behind the pointer", () => {
  const words = (n: number, seed: number) =>
    Array.from({ length: n }, (_, i) => ((seed * 7919 + i * 104729) % 2 ** 31).toString(36)).join(" ");
  const batch = (userId: string, i: number, text: string) => ({
    userId,
    sessionId: `s${i}`,
    generation: 1,
    from: 0,
    to: text.length,
    documents: [{ entryId: `e${i}`, kind: "user" as const, role: "user" as const, text, time: i }],
    labels: {},
  });

  it("is answered by the writer's copy, which made the changes, as the thread's own copy would answer", async () => {
    const config = await testAwsConfig();
    const stores = awsStores(config);
    const settings = { connection: config, table: config.table, blobs: stores.blobs, lines: storedLines(stores) };
    const index = new ThreadedS3SearchIndex(
      { ...settings, cacheDir: join(dir, "behind") },
      { ...DEFAULT_SEARCH_THREADS, threads: 1 },
    );
    const userId = `behind-${Date.now()}`;
    try {
      await index.warm();
      await index.apply(batch(userId, 0, "a grebe on the lake"));
      expect((await index.search(userId, parseQuery("grebe"), { limit: 5 })).sessions).toHaveLength(1);
      expect(index.answeredForThreads).toBe(0);
      // A bulk indexing: change after change, far more than a few appends' worth.
      for (let i = 1; i <= 60; i++) await index.apply(batch(userId, i, `${words(1500, i)} heron${i % 3}`));
      const query = parseQuery("heron2");
      const page = await index.search(userId, query, { limit: 50 });
      expect(index.answeredForThreads).toBe(1);
      expect(page.sessions).toHaveLength(20);
      // The same answer a copy brought up to the pointer by itself gives.
      const own = new S3SearchIndex({ ...settings, cacheDir: join(dir, "behind-own") });
      try {
        expect(await own.search(userId, query, { limit: 50 })).toEqual(page);
      } finally {
        own.close();
      }
      // The thread's copy catches up in the background meanwhile, then answers itself again: no
      // fold is needed (the log stays as it is), and the writer's copy is asked no more.
      await index.apply(batch(userId, 99, "a late grebe"));
      await vi.waitFor(
        async () => {
          const before = index.answeredForThreads;
          const after = await index.search(userId, parseQuery("grebe"), { limit: 5 });
          expect(after.sessions.map((s) => s.sessionId).sort()).toEqual(["s0", "s99"]);
          expect(index.answeredForThreads).toBe(before);
        },
        { timeout: 60_000, interval: 100 },
      );
      const answered = index.answeredForThreads;
      await index.apply(batch(userId, 100, "a grebe again"));
      expect((await index.search(userId, parseQuery("grebe"), { limit: 5 })).sessions).toHaveLength(3);
      expect(index.answeredForThreads).toBe(answered);
    } finally {
      await index.close();
    }
  }, 120_000);

  it("catches up by itself when the writer's copy does not hold the changes (another instance made them)", async () => {
    const config = await testAwsConfig();
    const stores = awsStores(config);
    const settings = { connection: config, table: config.table, blobs: stores.blobs, lines: storedLines(stores) };
    const index = new ThreadedS3SearchIndex(
      { ...settings, cacheDir: join(dir, "elsewhere") },
      { ...DEFAULT_SEARCH_THREADS, threads: 1 },
    );
    const other = new S3SearchIndex({ ...settings, cacheDir: join(dir, "elsewhere-writer") });
    const userId = `elsewhere-${Date.now()}`;
    try {
      await index.warm();
      await index.apply(batch(userId, 0, "a grebe on the lake"));
      expect((await index.search(userId, parseQuery("grebe"), { limit: 5 })).sessions).toHaveLength(1);
      for (let i = 1; i <= 60; i++) await other.apply(batch(userId, i, `${words(1500, i)} heron${i % 3}`));
      const page = await index.search(userId, parseQuery("heron1"), { limit: 50 });
      expect(page.sessions).toHaveLength(20);
      expect(index.answeredForThreads).toBe(0);
    } finally {
      other.close();
      await index.close();
    }
  }, 120_000);
});

describe("a search on another copy's behalf", () => {
  it("gives up when the copy is not free in time (a change holds it), then answers once it is", async () => {
    const config = await testAwsConfig();
    const stores = awsStores(config);
    let gate: Promise<void> | undefined;
    let entered = () => {};
    const real = stores.blobs;
    const blobs: BlobStore = Object.create(real);
    blobs.put = async (key, body) => {
      entered();
      await gate;
      return real.put(key, body);
    };
    const index = new S3SearchIndex({
      connection: config,
      table: config.table,
      blobs,
      lines: storedLines(stores),
      cacheDir: join(dir, "behalf"),
    });
    const userId = `behalf-${Date.now()}`;
    const doc = (i: number) => ({
      userId,
      sessionId: `s${i}`,
      generation: 1,
      from: 0,
      to: 10,
      documents: [{ entryId: `e${i}`, kind: "user" as const, role: "user" as const, text: "a grebe", time: i }],
      labels: {},
    });
    const position = async () => {
      const pointer = await index.pointers.get(userId);
      if (!pointer) throw new Error("no pointer");
      return { epoch: pointer.epoch, seq: headSeq(pointer) };
    };
    const limits = { waitMs: 200, runMs: 1000 };
    let open = () => {};
    let change: Promise<boolean> | undefined;
    try {
      await index.apply(doc(1));
      const query = parseQuery("grebe");
      expect(
        (await index.searchIfCurrent(userId, await position(), query, { limit: 5 }, limits))?.sessions,
      ).toHaveLength(1);
      // A change waits on the bucket while it holds the copy: the search gives up, and fast.
      gate = new Promise((resolve) => {
        open = resolve;
      });
      const holding = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const at = await position();
      change = index.apply(doc(2));
      await holding;
      const asked = Date.now();
      expect(await index.searchIfCurrent(userId, at, query, { limit: 5 }, limits)).toBeUndefined();
      expect(Date.now() - asked).toBeLessThan(5000);
      open();
      await change;
      // A copy behind the position asked for does not answer; at it, it does.
      expect(
        await index.searchIfCurrent(userId, { ...at, seq: at.seq + 5 }, query, { limit: 5 }, limits),
      ).toBeUndefined();
      expect(
        (await index.searchIfCurrent(userId, await position(), query, { limit: 5 }, limits))?.sessions,
      ).toHaveLength(2);
      expect(
        await index.searchIfCurrent(userId, { ...(await position()), epoch: "another" }, query, { limit: 5 }, limits),
      ).toBeUndefined();
    } finally {
      open();
      await change;
      index.close();
    }
  }, 60_000);
});
