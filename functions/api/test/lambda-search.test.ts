/**
 * Search on the Lambda entry, against DynamoDB Local and s3rver: a write leaves a durable mark
 * before it is answered; a search indexes its user's marks first; the scheduled pass indexes
 * every mark (a reindex clears and marks); a write whose mark could not be written is answered 503 and marked when sent again.
 */
import dc from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";
import { Tokens } from "@pisync/core";
import { parseQuery } from "@pisync/search";
import { commitMark, SearchMarks } from "@pisync/search/aws";
import { type AwsStoresConfig, awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { event } from "@pisync/testing/lambda-events";
import type { LambdaContext } from "hono/aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSearchingHandler } from "../src/lambda.js";
import { maintainSearch } from "../src/lambda-search.js";

const context = {} as LambdaContext;
type Answer = { statusCode: number; body: string; headers: Record<string, string> };

describe("search on the Lambda entry", () => {
  let config: AwsStoresConfig;
  let handler: ReturnType<typeof createSearchingHandler>;
  let marks: SearchMarks;
  const auth: Record<string, Record<string, string>> = {};

  beforeAll(async () => {
    config = await testAwsConfig();
    const stores = awsStores(config);
    handler = createSearchingHandler(stores, { connection: config, table: config.table });
    marks = new SearchMarks(config, config.table);
    for (const user of ["finder", "other"]) {
      auth[user] = { Authorization: `Bearer ${(await new Tokens(stores.meta).create(user, "test")).token}` };
    }
  });
  afterAll(() => handler?.index.close());

  const call = async (method: string, path: string, user: string, body?: string, headers = {}) =>
    (await handler(
      event(
        "function-url",
        method,
        path,
        { ...auth[user], ...headers },
        body ? new TextEncoder().encode(body) : undefined,
      ),
      context,
    )) as Answer;
  const session = (id: string, text: string) =>
    `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n` +
    `${JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } })}\n`;
  const append = (user: string, id: string, text: string) =>
    call("PATCH", `/v1/sessions/${id}`, user, session(id, text), { "Upload-Offset": "0" });
  const search = async (user: string, q: string) => {
    const answer = await call("GET", `/v1/search?q=${encodeURIComponent(q)}`, user);
    expect(answer.statusCode, answer.body).toBe(200);
    return (JSON.parse(answer.body) as { sessions: { sessionId: string }[] }).sessions.map((s) => s.sessionId);
  };

  it("marks a write before answering it, and a search indexes the user's marks first", async () => {
    expect((await append("finder", "sess-lam-1", "a searchable lamprey")).statusCode).toBe(200);
    expect((await marks.ofUser("finder")).map((m) => m.sessionId)).toEqual(["sess-lam-1"]);
    expect(await handler.index.state("finder", "sess-lam-1")).toBeUndefined(); // not indexed by the write
    expect(await search("other", "lamprey")).toEqual([]); // another user's search neither finds nor indexes it
    expect(await marks.ofUser("finder")).toHaveLength(1);
    expect(await search("finder", "lamprey")).toEqual(["sess-lam-1"]);
    expect(await marks.ofUser("finder")).toEqual([]);
  });

  it("the scheduled pass indexes every marked session (a crash between a write and its indexing)", async () => {
    expect((await append("finder", "sess-lam-2", "a scheduled sturgeon")).statusCode).toBe(200);
    expect((await append("other", "sess-lam-3", "their own sturgeon")).statusCode).toBe(200);
    await handler({ "detail-type": "Scheduled Event" }, context);
    expect(await handler.index.state("finder", "sess-lam-2")).toEqual({ generation: 1, offset: expect.any(Number) });
    expect(await handler.index.state("other", "sess-lam-3")).toBeDefined();
    expect(await marks.ofUser("finder")).toEqual([]);
    expect(await marks.ofUser("other")).toEqual([]);
    expect(await search("finder", "sturgeon")).toEqual(["sess-lam-2"]);
    expect(await search("other", "sturgeon")).toEqual(["sess-lam-3"]);
  });

  it("a deleted session leaves the index at the next search", async () => {
    expect((await call("DELETE", "/v1/sessions/sess-lam-2", "finder")).statusCode).toBe(204);
    expect(await search("finder", "sturgeon")).toEqual([]);
    expect(await handler.index.state("finder", "sess-lam-2")).toBeUndefined();
  });

  it("rebuilds a user's index from the bytes when invoked with a reindex event", async () => {
    await handler.index.clear("finder");
    expect(await handler.index.state("finder", "sess-lam-1")).toBeUndefined();
    const answer = await handler({ pisync: "reindex", users: ["finder"] }, context);
    expect(answer).toEqual({ reindexed: ["finder"], marked: expect.any(Number) });
    expect((await marks.ofUser("finder")).map((m) => m.sessionId)).toContain("sess-lam-1"); // marked, not yet indexed
    await handler({ "detail-type": "Scheduled Event" }, context);
    expect(await handler.index.state("finder", "sess-lam-1")).toBeDefined();
    expect(await search("finder", "lamprey")).toEqual(["sess-lam-1"]);
    expect(await search("other", "lamprey")).toEqual([]);
    await expect(handler({ pisync: "reindex", users: ["../x"] }, context)).rejects.toThrow(/user ids/);
  });

  it("the upkeep folds each user's search log into a base and removes what no pointer names", async () => {
    expect((await append("finder", "sess-lam-5", "a compacted lungfish")).statusCode).toBe(200);
    expect(await search("finder", "lungfish")).toEqual(["sess-lam-5"]);
    expect((await (await handler.s3Index()).pointers.get("finder"))?.log.length).toBeGreaterThan(0);
    const upkeep = await maintainSearch(await handler.s3Index(), { minAgeMs: 0 });
    expect(upkeep.compacted).toBeGreaterThanOrEqual(1);
    expect(upkeep.removed).toBeGreaterThanOrEqual(1); // the folded log entries
    const pointer = await (await handler.s3Index()).pointers.get("finder");
    expect(pointer?.log).toEqual([]);
    expect(pointer?.base).toBeDefined();
    const fresh = createSearchingHandler(awsStores(config), { connection: config, table: config.table });
    try {
      const page = await fresh.index.search("finder", parseQuery("lungfish"), { limit: 10 });
      expect(page.sessions.map((s) => s.sessionId)).toEqual(["sess-lam-5"]);
    } finally {
      fresh.index.close();
    }
  });

  it("an append's mark is written by its own commit, with no round trip after it (as the function runs)", async () => {
    const folding = createSearchingHandler(awsStores({ ...config, commitItems: (commit) => [commitMark(commit)] }), {
      connection: config,
      table: config.table,
      marksInCommits: true,
    });
    const sent: string[] = [];
    const started = ({ request }: { request: ClientRequest }) => {
      sent.push(String(request.getHeader("x-amz-target") ?? `S3 ${request.method}`).replace("DynamoDB_20120810.", ""));
    };
    dc.subscribe("http.client.request.start", started as never);
    try {
      const body = new TextEncoder().encode(session("sess-lam-6", "a folded flounder"));
      const headers = { ...auth.finder, "Upload-Offset": "0" };
      const answer = (await folding(
        event("function-url", "PATCH", "/v1/sessions/sess-lam-6", headers, body),
        context,
      )) as Answer;
      expect(answer.statusCode, answer.body).toBe(200);
    } finally {
      dc.unsubscribe("http.client.request.start", started as never);
      folding.index.close();
    }
    expect(sent.filter((name) => name === "PutItem")).toEqual([]); // no mark of its own
    expect(sent.filter((name) => name === "TransactWriteItems")).toHaveLength(1);
    expect((await marks.ofUser("finder")).map((m) => m.sessionId)).toContain("sess-lam-6");
    expect(await search("finder", "flounder")).toEqual(["sess-lam-6"]);
    // A retry commits nothing: its write is marked after it, as before.
    const again = await call("PATCH", "/v1/sessions/sess-lam-6", "finder", session("sess-lam-6", "a folded flounder"), {
      "Upload-Offset": "0",
    });
    expect(JSON.parse(again.body).retry).toBe(true);
    expect((await marks.ofUser("finder")).map((m) => m.sessionId)).toContain("sess-lam-6");
  });

  it("answers 503 when a write's mark cannot be written, and marks it when it is sent again", async () => {
    const unmarked = createSearchingHandler(awsStores(config), { connection: config, table: "no-such-table" });
    const body = new TextEncoder().encode(session("sess-lam-4", "a retried remora"));
    const headers = { ...auth.finder, "Upload-Offset": "0" };
    const first = (await unmarked(
      event("function-url", "PATCH", "/v1/sessions/sess-lam-4", headers, body),
      context,
    )) as Answer;
    unmarked.index.close();
    expect(first.statusCode).toBe(503);
    expect(JSON.parse(first.body).code).toBe("busy");
    expect(first.headers["retry-after"]).toBe("1");
    const again = await call("PATCH", "/v1/sessions/sess-lam-4", "finder", session("sess-lam-4", "a retried remora"), {
      "Upload-Offset": "0",
    });
    expect(again.statusCode, again.body).toBe(200); // its bytes were stored: the retry finds them
    expect(await search("finder", "remora")).toEqual(["sess-lam-4"]);
  });
});
