/**
 * `GET /v1/search?team=` on both store pairs: a team is a tenant of its own, so the words of a
 * member's sessions outside the team change nothing a member sees through the team's search —
 * hits, snippets, completions, order — and a non-member finds no team at all.
 */
import { SearchIndexer, storedLines, TeamSearch, teamLines } from "@pisync/core";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { describeOnEveryStore } from "@pisync/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, eventually, userToken } from "./harness.js";

type Client = ReturnType<typeof client>;
type Page = { sessions: Array<{ sessionId: string; owner: string; entries: Array<{ snippet: { text: string }[] }> }> };

describeOnEveryStore("team search", (pair) => {
  let app: ReturnType<typeof createApp>;
  let own: SqliteSearchIndex;
  let teamIndex: SqliteSearchIndex;
  let indexer: SearchIndexer;
  let teams: TeamSearch;
  let owner: Client;
  let member: Client;
  let outsider: Client;
  let teamId: string;
  let at = 0;

  const line = (id: string, text: string, parentId: string | null) =>
    `${JSON.stringify({ type: "message", id, parentId, timestamp: new Date(Date.UTC(2026, 1, 1, 10, 0, at++)).toISOString(), message: { role: "user", content: text, timestamp: 1 } })}\n`;
  /** A session of `texts`, one user entry each, stored by `c` and indexed for its owner. */
  const write = async (c: Client, id: string, texts: string[]) => {
    let body = `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-02-01T10:00:00.000Z", cwd: "/a" })}\n`;
    texts.forEach((text, i) => {
      body += line(`${id}-${i}`, text, i === 0 ? null : `${id}-${i - 1}`);
    });
    expect((await c.patch(id, 0, body)).status).toBeLessThan(300);
  };
  const put = (c: Client, id: string, team: string | null) =>
    app.request(`/v1/sessions/${id}/team`, {
      method: "PUT",
      headers: { ...c.auth, "Content-Type": "application/json" },
      body: JSON.stringify({ team }),
    });
  const settle = async () => {
    await indexer.flush();
    await teams.catchUp([teamId]);
  };
  const search = async (c: Client, q: string, team: string | undefined = teamId) => {
    const response = await c.get(`/v1/search?q=${encodeURIComponent(q)}&limit=20${team ? `&team=${team}` : ""}`);
    return { status: response.status, body: (await response.json()) as Page };
  };
  const refs = (page: Page) => page.sessions.map((s) => `${s.owner}:${s.sessionId}`);

  beforeAll(async () => {
    const stores = pair().stores;
    if (!stores.teams) throw new Error("no teams in this store pair");
    own = new SqliteSearchIndex(":memory:", storedLines(stores));
    teamIndex = new SqliteSearchIndex(":memory:", teamLines(stores, stores.teams));
    indexer = new SearchIndexer(stores, own);
    teams = new TeamSearch(stores, stores.teams, teamIndex);
    app = createApp({ stores, log: () => {}, search: { index: own, indexer, teams } });
    [owner, member, outsider] = await Promise.all(
      ["olivia", "mia", "otto"].map(async (u) => client(app, await userToken(stores, u))),
    );
    teamId = (await (await owner.post("/v1/teams", { name: "Acme" })).json()).id;
    const link = (await (await owner.post(`/v1/teams/${teamId}/invites`, {})).json()).url as string;
    expect((await member.post(`/v1/join/${link.slice(link.lastIndexOf("/") + 1)}`, {})).status).toBe(200);
  });
  afterAll(() => {
    indexer.stop();
    teams.indexer.stop();
    own.close();
    teamIndex.close();
  });

  it("a member's words outside the team change nothing in the team's answers: hits, snippets, completions, order", async () => {
    // The completion oracle: 15 frequent words of one prefix and a rare probe fill the 16 completions.
    await write(
      member,
      "t-oracle",
      Array.from({ length: 45 }, (_, k) => `ak${String.fromCharCode(97 + Math.floor(k / 3))}word filler`),
    );
    await write(owner, "t-probe", ["akzprobe once"]);
    // Two entries whose order depends on the two words' statistics (bm25's idf).
    await write(member, "t-rank-1", ["alpha alpha beta"]);
    await write(owner, "t-rank-2", ["alpha beta beta"]);
    await write(member, "t-rank-3", ["beta gamma", "beta gamma", "beta gamma"]);
    for (const [c, id] of [
      [member, "t-oracle"],
      [owner, "t-probe"],
      [member, "t-rank-1"],
      [owner, "t-rank-2"],
      [member, "t-rank-3"],
    ] as const) {
      expect((await put(c, id, teamId)).status).toBe(200);
    }
    await settle();
    const queries = ["ak*", "akz*", "alpha beta", "beta", "filler", "akia*", "secret*"];
    const answers = () => Promise.all(queries.map(async (q) => (await search(member, q)).body));
    const alone = await answers();
    expect(refs(alone[0] as Page)).toContain("olivia:t-probe");
    expect(refs(alone[2] as Page)).toEqual(["mia:t-rank-1", "olivia:t-rank-2"]);
    expect((alone[5] as Page).sessions).toEqual([]);

    // Both members' sessions outside the team: a credential-like word of the same prefix in many
    // entries, and "alpha" everywhere.
    const theirs = Array.from({ length: 20 }, (_, i) => `akiasecretkey alpha ${i}`);
    await write(member, "private-1", theirs);
    await write(owner, "private-2", theirs);
    await settle();
    // Their own search finds them; the team's does not, and answers as before, word for word.
    expect((await search(member, "akia*", "")).body.sessions.map((s) => s.sessionId)).toEqual(["private-1"]);
    expect(await answers()).toEqual(alone);
    expect(await Promise.all(queries.map(async (q) => (await search(owner, q)).body))).toEqual(alone);
    expect(JSON.stringify(await answers())).not.toContain("akiasecretkey");
  });

  it("a session taken back, or its owner removed, leaves the team's search; one put in joins it", async () => {
    expect(refs((await search(owner, "akzprobe")).body)).toEqual(["olivia:t-probe"]);
    expect((await put(owner, "t-probe", null)).status).toBe(200);
    await settle();
    expect((await search(owner, "akzprobe")).body.sessions).toEqual([]);
    // An append to a team session is followed by the team's index without a catch-up pass.
    await write(member, "t-late", ["zebrafinch sighting"]);
    expect((await put(member, "t-late", teamId)).status).toBe(200);
    await eventually(
      async () => refs((await search(owner, "zebrafinch")).body),
      (found) => found.length === 1,
    );
    expect(refs((await search(owner, "zebrafinch")).body)).toEqual(["mia:t-late"]);
    expect((await owner.delete(`/v1/teams/${teamId}/members/mia`)).status).toBe(204);
    // Left out at once (the hits are checked against the team), and forgotten by the index.
    expect((await search(owner, "zebrafinch")).body.sessions).toEqual([]);
    await settle();
    expect(await teamIndex.sessions(teamId)).not.toContainEqual(expect.objectContaining({ sessionId: "mia:t-late" }));
    expect((await search(member, "zebrafinch")).status).toBe(404);
  });

  it("a non-member's ?team= is 404, as an unknown team's; without team each user searches their own", async () => {
    await write(outsider, "x1", ["alpha from otto"]);
    await settle();
    expect((await search(outsider, "alpha")).status).toBe(404);
    expect((await search(outsider, "alpha", "t0000000000000000")).status).toBe(404);
    expect((await search(owner, "alpha", "not a team")).status).toBe(404);
    const mine = await search(outsider, "alpha", "");
    expect(mine.body.sessions.map((s) => s.sessionId)).toEqual(["x1"]);
  });
});
