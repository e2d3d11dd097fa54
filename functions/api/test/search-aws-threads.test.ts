/**
 * Search on `npm start -- --store aws` (the node server on S3 + DynamoDB, here DynamoDB Local
 * and s3rver): searches run on threads of their own, never on the server's, see what was just
 * indexed, and answer 503 search_timeout past their time limit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startNodeServer } from "../src/index.js";
import type { AwsStoreSettings } from "../src/node-stores.js";
import { userToken } from "./harness.js";

const header = (id: string) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-02-01T10:00:00.000Z", cwd: "/home/me/app" })}\n`;
const user = (id: string, text: string) =>
  `${JSON.stringify({ type: "message", id, parentId: null, timestamp: "2026-02-01T10:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } })}\n`;

type Server = Awaited<ReturnType<typeof startNodeServer>>;

describe("search on npm start --store aws", () => {
  let dataDir: string;
  let settings: AwsStoreSettings;
  let token: string;
  let server: Server | undefined;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "pisync-search-aws-threads-"));
    const config = await testAwsConfig();
    // A credential source, as the SDK's default chain is: the threads ask the server's for what it gives.
    const fixed = config.credentials;
    settings = { ...config, credentials: async () => (typeof fixed === "function" ? fixed() : fixed) };
    token = await userToken(awsStores(config), "alice");
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await server?.close();
    server = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const append = (id: string, body: string) =>
    fetch(`${(server as Server).url}/v1/sessions/${id}`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${token}`, "Upload-Offset": "0" },
      body,
    });
  const search = (q: string) =>
    fetch(`${(server as Server).url}/v1/search?q=${encodeURIComponent(q)}`, {
      headers: { Authorization: `Bearer ${token}` },
    });

  it("searches on a thread other than the server's, and sees what was just indexed", async () => {
    // Every search of the index runs SqliteSearchIndex.search; on the server's thread it would be this one.
    const onServerThread = vi.spyOn(SqliteSearchIndex.prototype, "search");
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, log: () => {}, aws: settings });
    expect((await append("s1", header("s1") + user("aa11", "a heron on the threads"))).ok).toBe(true);
    let found: Array<{ sessionId: string; entries: Array<{ entryId: string; snippet?: string }> }> = [];
    for (const until = Date.now() + 20_000; found.length === 0 && Date.now() < until; ) {
      const response = await search("heron");
      expect(response.status).toBe(200);
      found = ((await response.json()) as { sessions: typeof found }).sessions;
      if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(found).toMatchObject([{ sessionId: "s1", entries: [{ entryId: "aa11" }] }]);
    // The snippet was cut from the stored line the thread asked the server for.
    expect(JSON.stringify(found[0]?.entries[0])).toMatch(/heron/);
    expect(onServerThread).not.toHaveBeenCalled();
  }, 60_000);

  it("answers 503 search_timeout when a search passes its time limit", async () => {
    server = await startNodeServer({
      port: 0,
      host: "127.0.0.1",
      dataDir,
      log: () => {},
      aws: settings,
      // No search reads a pointer item and a copy within a millisecond.
      searchThreads: { threads: 1, timeLimitMs: 1, queue: 4, perUser: 4 },
    });
    const response = await search("heron");
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("1");
    expect(await response.json()).toMatchObject({ code: "search_timeout", error: expect.stringMatching(/1 ms/) });
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  }, 60_000);
});
