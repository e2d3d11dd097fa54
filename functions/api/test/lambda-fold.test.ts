/**
 * Folds of the AWS search index's log on the Lambda entry's indexer, against DynamoDB Local and
 * s3rver: a search (a request) never waits for a fold; the next scheduled pass does it first.
 */
import { randomBytes } from "node:crypto";
import { Appender, storedLines } from "@pisync/core";
import { parseQuery } from "@pisync/search";
import { type CompactionReport, S3SearchIndex, SearchMarks } from "@pisync/search/aws";
import { type AwsStoresConfig, awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MarkingIndexer } from "../src/marking-indexer.js";

const session = (id: string, text: string) =>
  new TextEncoder().encode(
    `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n` +
      `${JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } })}\n`,
  );

describe("folds of the search log on Lambda", () => {
  let config: AwsStoresConfig;
  let index: S3SearchIndex;
  const folds: CompactionReport[] = [];

  beforeAll(async () => {
    config = await testAwsConfig();
    const stores = awsStores(config);
    index = new S3SearchIndex({
      connection: config,
      table: config.table,
      blobs: stores.blobs,
      lines: storedLines(stores),
      compactAfter: { entries: 2, bytes: 1 << 30 },
      onCompaction: (report) => folds.push(report),
    });
  });
  afterAll(() => index?.close());

  it("a search indexes its user's marks without folding the log; the next scheduled pass folds it first", async () => {
    const stores = awsStores(config);
    const marks = new SearchMarks(config, config.table);
    const indexer = new MarkingIndexer(stores, index, marks, () => {});
    const user = `folder-${randomBytes(4).toString("hex")}`;
    for (let i = 0; i < 3; i++) {
      const id = `sess-fold-${i}`;
      await new Appender(stores).append({
        userId: user,
        sessionId: id,
        offset: 0,
        body: session(id, `a folded kestrel ${i}`),
      });
      indexer.markDirty(user, id);
      await indexer.settle();
      expect((await indexer.catchUpUser(user)).indexed).toBe(1);
    }
    const before = await index.pointers.get(user);
    expect(before?.log).toHaveLength(3);
    expect(before?.base).toBeUndefined();
    expect(folds.filter((fold) => fold.userId === user)).toEqual([]);
    // A pass whose budget is already spent still does its first piece of work: the fold.
    await indexer.catchUpMarked(1);
    const after = await index.pointers.get(user);
    expect(after?.base?.seq).toBe(3);
    expect(after?.log).toEqual([]);
    expect(folds.filter((fold) => fold.userId === user && fold.published)).toHaveLength(1);
    expect((await index.search(user, parseQuery("kestrel"), { limit: 10 })).sessions).toHaveLength(3);
  });
});
