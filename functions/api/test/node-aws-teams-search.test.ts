/**
 * Team search on the one-machine server with S3 + DynamoDB (`npm start -- --store aws`), against
 * DynamoDB Local and s3rver: as on Lambda, each team a tenant of the users' S3 index (no SQLite
 * file of teams in the data folder); a member finds the team's sessions, never a session out of
 * it; a non-member gets 404.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedLines, Tokens, teamTenant } from "@pisync/core";
import { S3SearchIndex } from "@pisync/search/aws";
import { type AwsStoresConfig, awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";
import { eventually } from "./harness.js";

type Page = { sessions: Array<{ sessionId: string; owner: string }> };

describe("team search on the Node server with S3 + DynamoDB", () => {
  let config: AwsStoresConfig;
  let dir: string;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  const auth: Record<string, string> = {};

  const send = (user: string, method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${auth[user]}`, ...headers },
      ...(body === undefined ? {} : { body }),
    });
  const json = (user: string, method: string, path: string, body: unknown) =>
    send(user, method, path, JSON.stringify(body), { "content-type": "application/json" });
  const write = async (user: string, id: string, text: string) => {
    const body =
      `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n` +
      `${JSON.stringify({ type: "message", id: "m0", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } })}\n`;
    expect((await send(user, "PATCH", `/v1/sessions/${id}`, body, { "upload-offset": "0" })).status).toBe(200);
  };
  const search = async (user: string, q: string, team: string) => {
    const answer = await send(user, "GET", `/v1/search?q=${encodeURIComponent(q)}&team=${team}`);
    return { status: answer.status, body: (await answer.json()) as Page };
  };

  beforeAll(async () => {
    config = await testAwsConfig();
    dir = mkdtempSync(join(tmpdir(), "pisync-node-teams-"));
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir: dir, aws: config, log: () => {} });
    auth.local = server.token;
    const tokens = new Tokens(awsStores(config).meta);
    for (const user of ["mia", "otto"]) auth[user] = (await tokens.create(user, "test")).token;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a member finds the team's sessions in the team's tenant of the S3 index; never one out of it", async () => {
    const teamId = ((await (await json("local", "POST", "/v1/teams", { name: "Acme" })).json()) as { id: string }).id;
    const invite = (await (await json("local", "POST", `/v1/teams/${teamId}/invites`, {})).json()) as { url: string };
    expect(
      (await json("mia", "POST", `/v1/join/${invite.url.slice(invite.url.lastIndexOf("/") + 1)}`, {})).status,
    ).toBe(200);
    await write("mia", "in-team", "a heron by the weir");
    await write("mia", "private", "a heron in my diary");
    await write("local", "mine", "the heron again");
    expect((await json("mia", "PUT", "/v1/sessions/in-team/team", { team: teamId })).status).toBe(200);
    expect((await json("local", "PUT", "/v1/sessions/mine/team", { team: teamId })).status).toBe(200);
    const refs = async (user: string) =>
      (await search(user, "heron", teamId)).body.sessions.map((s) => `${s.owner}:${s.sessionId}`).sort();
    await eventually(
      () => refs("local"),
      (found) => found.length === 2,
    );
    expect(await refs("local")).toEqual(["local:mine", "mia:in-team"]);
    expect(await refs("mia")).toEqual(["local:mine", "mia:in-team"]);
    expect((await search("otto", "heron", teamId)).status).toBe(404);
    // The team is a tenant of the users' S3 index, not a SQLite file of this machine.
    expect(existsSync(join(dir, "search-teams.sqlite"))).toBe(false);
    const index = new S3SearchIndex({
      connection: config,
      table: config.table,
      blobs: awsStores(config).blobs,
      lines: storedLines(awsStores(config)),
      cacheDir: join(dir, "probe"),
    });
    try {
      expect((await index.sessions(teamTenant(teamId))).map((s) => s.sessionId).sort()).toEqual([
        "local:mine",
        "mia:in-team",
      ]);
    } finally {
      index.close();
    }
  }, 120_000);
});
