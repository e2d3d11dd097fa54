/**
 * The AWS index with its searches on threads ({@link ThreadedS3SearchIndex}) keeps the search
 * contract: every write on the owning thread is seen by the next search on a thread.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedLines } from "@pisync/core";
import { awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll } from "vitest";
import { ThreadedS3SearchIndex } from "../src/aws/threaded.js";
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
