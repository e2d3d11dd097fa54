/**
 * Search marks on the one-machine server with S3 + DynamoDB (`npm start -- --store aws`),
 * against DynamoDB Local and s3rver: bounded passes run back to back until no mark is due.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Appender, storedLines } from "@pisync/core";
import { S3SearchIndex, SearchMarks } from "@pisync/search/aws";
import { type AwsStoresConfig, awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_USER, startNodeServer } from "../src/index.js";
import { MarkingIndexer, passesUntilDone } from "../src/marking-indexer.js";

const enc = (text: string) => new TextEncoder().encode(text);
const session = (id: string, text: string) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n` +
  `${JSON.stringify({ type: "message", id: "m0", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } })}\n`;

describe("search marks on the Node server with S3 + DynamoDB", () => {
  let config: AwsStoresConfig;
  let dir: string;

  beforeAll(async () => {
    config = await testAwsConfig();
    dir = mkdtempSync(join(tmpdir(), "pisync-node-marks-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Stores sessions of a user and marks them all, as a rebuild does. */
  const storeMarked = async (user: string, count: number, word: string) => {
    const stores = awsStores(config);
    const appender = new Appender(stores);
    const ids = Array.from({ length: count }, (_, i) => `${word}-${i}`);
    for (const id of ids)
      await appender.append({ userId: user, sessionId: id, offset: 0, body: enc(session(id, `a ${word} ${id}`)) });
    const marks = new SearchMarks(config, config.table);
    await marks.markMany(user, ids);
    return { stores, marks };
  };

  it("runs bounded passes back to back until no mark is due", async () => {
    const { stores, marks } = await storeMarked("backtoback", 20, "heron");
    const index = new S3SearchIndex({
      connection: config,
      table: config.table,
      blobs: stores.blobs,
      lines: storedLines(stores),
      cacheDir: join(dir, "passes"),
    });
    try {
      // A budget so small that each pass indexes one step: the run needs several.
      const run = await passesUntilDone(new MarkingIndexer(stores, index, marks), 1);
      expect(run.passes).toBeGreaterThan(1);
      expect(run).toMatchObject({ indexed: 20, more: false });
      expect(await marks.ofUser("backtoback")).toEqual([]);
      expect(await index.sessions("backtoback")).toHaveLength(20);
    } finally {
      index.close();
      marks.close();
    }
  }, 120_000);

  it("indexes the due marks it finds when it starts", async () => {
    const { marks } = await storeMarked(LOCAL_USER, 12, "egret");
    const server = await startNodeServer({
      port: 0,
      host: "127.0.0.1",
      dataDir: join(dir, "server"),
      aws: config,
      log: () => {},
    });
    try {
      for (let i = 0; i < 120 && (await marks.ofUser(LOCAL_USER)).length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(await marks.ofUser(LOCAL_USER)).toEqual([]);
      const answer = await fetch(`${server.url}/v1/search?q=egret&limit=50`, {
        headers: { authorization: `Bearer ${server.token}` },
      });
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { sessions: unknown[] }).sessions).toHaveLength(12);
    } finally {
      await server.close();
      marks.close();
    }
  }, 120_000);
});
