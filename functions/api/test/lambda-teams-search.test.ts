/**
 * `GET /v1/search?team=` on the Lambda entry, against DynamoDB Local and s3rver: each team a
 * tenant of the users' S3 index, fed by durable marks written before a write is answered. The
 * tenancy cases of the embedded server's team search, here: a member finds the team's sessions,
 * a member's words outside the team change nothing in the team's answers (hits, snippets,
 * completions, order), a session taken out or its owner removed leaves, a non-member gets 404.
 */
import { Tokens, teamTenant } from "@pisync/core";
import { SearchMarks } from "@pisync/search/aws";
import { type AwsStoresConfig, awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { event } from "@pisync/testing/lambda-events";
import type { LambdaContext } from "hono/aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSearchingHandler } from "../src/lambda.js";
import { MarkingIndexer } from "../src/marking-indexer.js";

const context = {} as LambdaContext;
type Answer = { statusCode: number; body: string };
type Page = { sessions: Array<{ sessionId: string; owner: string; entries: Array<{ snippet: { text: string }[] }> }> };

describe("team search on the Lambda entry", () => {
  let handler: ReturnType<typeof createSearchingHandler>;
  let config: AwsStoresConfig;
  let marks: SearchMarks;
  let teamId: string;
  const auth: Record<string, Record<string, string>> = {};
  let at = 0;

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
  const json = (method: string, path: string, user: string, body: unknown) =>
    call(method, path, user, JSON.stringify(body), { "Content-Type": "application/json" });
  const line = (id: string, text: string, parentId: string | null) =>
    `${JSON.stringify({ type: "message", id, parentId, timestamp: new Date(Date.UTC(2026, 1, 1, 10, 0, at++)).toISOString(), message: { role: "user", content: text, timestamp: 1 } })}\n`;
  const write = async (user: string, id: string, texts: string[]) => {
    let body = `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-02-01T10:00:00.000Z", cwd: "/a" })}\n`;
    texts.forEach((text, i) => {
      body += line(`${id}-${i}`, text, i === 0 ? null : `${id}-${i - 1}`);
    });
    const answer = await call("PATCH", `/v1/sessions/${id}`, user, body, { "Upload-Offset": "0" });
    expect(answer.statusCode, answer.body).toBeLessThan(300);
  };
  const put = async (user: string, id: string, team: string | null) =>
    (await json("PUT", `/v1/sessions/${id}/team`, user, { team })).statusCode;
  const search = async (user: string, q: string, team: string | undefined = teamId) => {
    const answer = await call(
      "GET",
      `/v1/search?q=${encodeURIComponent(q)}&limit=20${team ? `&team=${team}` : ""}`,
      user,
    );
    return { status: answer.statusCode, body: JSON.parse(answer.body) as Page };
  };
  const refs = (page: Page) => page.sessions.map((s) => `${s.owner}:${s.sessionId}`);

  beforeAll(async () => {
    config = await testAwsConfig();
    const stores = awsStores(config);
    handler = createSearchingHandler(stores, { connection: config, table: config.table });
    marks = new SearchMarks(config, config.table);
    for (const user of ["olivia", "mia", "otto"]) {
      auth[user] = { Authorization: `Bearer ${(await new Tokens(stores.meta).create(user, "test")).token}` };
    }
    teamId = JSON.parse((await json("POST", "/v1/teams", "olivia", { name: "Acme" })).body).id;
    const link = JSON.parse((await json("POST", `/v1/teams/${teamId}/invites`, "olivia", {})).body).url as string;
    expect((await json("POST", `/v1/join/${link.slice(link.lastIndexOf("/") + 1)}`, "mia", {})).statusCode).toBe(200);
  });
  afterAll(() => {
    marks?.close();
    handler?.index.close();
  });

  it("a member finds every member's team sessions; their words outside the team change nothing in its answers", async () => {
    // The completion oracle: 15 frequent words of one prefix and a rare probe fill the 16 completions.
    await write(
      "mia",
      "t-oracle",
      Array.from({ length: 45 }, (_, k) => `ak${String.fromCharCode(97 + Math.floor(k / 3))}word filler`),
    );
    await write("olivia", "t-probe", ["akzprobe once"]);
    await write("mia", "t-rank-1", ["alpha alpha beta"]);
    await write("olivia", "t-rank-2", ["alpha beta beta"]);
    await write("mia", "t-rank-3", ["beta gamma", "beta gamma", "beta gamma"]);
    for (const [user, id] of [
      ["mia", "t-oracle"],
      ["olivia", "t-probe"],
      ["mia", "t-rank-1"],
      ["olivia", "t-rank-2"],
      ["mia", "t-rank-3"],
    ] as const) {
      expect(await put(user, id, teamId)).toBe(200);
    }
    // Putting a session in marks the team's tenant before the answer: nothing runs after it on Lambda.
    expect((await marks.ofUser(teamTenant(teamId))).map((m) => m.sessionId).sort()).toEqual(
      ["mia:t-oracle", "mia:t-rank-1", "mia:t-rank-3", "olivia:t-probe", "olivia:t-rank-2"].sort(),
    );
    const queries = ["ak*", "akz*", "alpha beta", "beta", "filler", "akia*", "secret*"];
    const answers = () => Promise.all(queries.map(async (q) => (await search("mia", q)).body));
    const alone = await answers();
    expect(refs(alone[0] as Page)).toContain("olivia:t-probe");
    expect(refs(alone[2] as Page)).toEqual(["mia:t-rank-1", "olivia:t-rank-2"]);
    expect((alone[5] as Page).sessions).toEqual([]);
    expect(await marks.ofUser(teamTenant(teamId))).toEqual([]); // the team's search indexed them

    const theirs = Array.from({ length: 20 }, (_, i) => `akiasecretkey alpha ${i}`);
    await write("mia", "private-1", theirs);
    await write("olivia", "private-2", theirs);
    // Their own search finds them; the team's does not, and answers as before, word for word.
    expect((await search("mia", "akia*", "")).body.sessions.map((s) => s.sessionId)).toEqual(["private-1"]);
    await handler({ "detail-type": "Scheduled Event" }, context);
    expect(await answers()).toEqual(alone);
    expect(await Promise.all(queries.map(async (q) => (await search("olivia", q)).body))).toEqual(alone);
    expect(JSON.stringify(await answers())).not.toContain("akiasecretkey");
    // The users' tenants never hold the team's sessions, nor the team's a private one.
    expect((await handler.index.sessions(teamTenant(teamId))).map((s) => s.sessionId)).not.toContain("mia:private-1");
    expect((await handler.index.sessions("mia")).map((s) => s.sessionId)).not.toContain("mia:t-oracle");
  });

  it("an append to a team session is marked for the team before its answer, and found by the next team search", async () => {
    await write("mia", "t-late", ["zebrafinch sighting"]);
    expect(await put("mia", "t-late", teamId)).toBe(200);
    expect(refs((await search("olivia", "zebrafinch")).body)).toEqual(["mia:t-late"]);
    const more = line("t-late-1", "a second kestrel", "t-late-0");
    const length = JSON.parse((await call("GET", "/v1/sessions/t-late", "mia")).body).bytes as number;
    const answer = await call("PATCH", "/v1/sessions/t-late", "mia", more, { "Upload-Offset": String(length) });
    expect(answer.statusCode, answer.body).toBe(200);
    expect((await marks.ofUser(teamTenant(teamId))).map((m) => m.sessionId)).toEqual(["mia:t-late"]);
    expect(refs((await search("olivia", "kestrel")).body)).toEqual(["mia:t-late"]);
  });

  it("a request's answer waits for the marks held work leaves after it started waiting (a write's team lookup)", async () => {
    // Marks written slowly: without waiting for them, the answer would go first and the process may freeze.
    const slow = new Proxy(marks, {
      get(target, name) {
        if (name === "mark") {
          return async (user: string, session: string) => {
            await new Promise((resolve) => setTimeout(resolve, 300));
            await target.mark(user, session);
          };
        }
        const value = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const indexer = new MarkingIndexer(awsStores(config), handler.index, slow);
    const tenant = teamTenant("t00000000000000aa");
    indexer.hold(
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        indexer.markDirty(tenant, "mia:held");
      })(),
    );
    await indexer.settle();
    expect((await marks.ofUser(tenant)).map((m) => m.sessionId)).toEqual(["mia:held"]);
  });

  it("a reindex event rebuilds a team's tenant from the sessions in the team", async () => {
    const tenant = teamTenant(teamId);
    const before = (await handler.index.sessions(tenant)).map((s) => s.sessionId).sort();
    expect(before).toContain("mia:t-late");
    const rebuilt = await handler({ pisync: "reindex", users: [tenant] }, context);
    expect(rebuilt).toEqual({ reindexed: [tenant], marked: before.length });
    expect(await handler.index.sessions(tenant)).toEqual([]);
    expect((await marks.ofUser(tenant)).map((m) => m.sessionId).sort()).toEqual(before);
    await handler({ "detail-type": "Scheduled Event" }, context);
    expect((await handler.index.sessions(tenant)).map((s) => s.sessionId).sort()).toEqual(before);
    await expect(handler({ pisync: "reindex", users: ["~not-a-team"] }, context)).rejects.toThrow(/reindex event/);
  });

  it("a session taken back, or its owner removed, leaves the team's search; a non-member gets 404", async () => {
    expect(refs((await search("olivia", "akzprobe")).body)).toEqual(["olivia:t-probe"]);
    expect(await put("olivia", "t-probe", null)).toBe(200);
    expect((await search("olivia", "akzprobe")).body.sessions).toEqual([]);
    expect((await call("DELETE", `/v1/teams/${teamId}/members/mia`, "olivia")).statusCode).toBe(204);
    expect((await search("olivia", "zebrafinch")).body.sessions).toEqual([]);
    expect((await handler.index.sessions(teamTenant(teamId))).map((s) => s.sessionId)).not.toContain("mia:t-late");
    expect((await search("mia", "zebrafinch")).status).toBe(404);

    await write("otto", "x1", ["alpha from otto"]);
    expect((await search("otto", "alpha")).status).toBe(404);
    expect((await search("otto", "alpha", "t0000000000000000")).status).toBe(404);
    expect((await search("otto", "alpha", "")).body.sessions.map((s) => s.sessionId)).toEqual(["x1"]);
  });
});
