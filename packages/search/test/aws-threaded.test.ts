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
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
