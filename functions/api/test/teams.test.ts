/**
 * The team library over HTTP on both store pairs: every line of the contract as a non-member, a
 * member and an admin (the owner too), and the team policy's hold on share links.
 */
import { newShareKeys } from "@pisync/core";
import { describeOnEveryStore } from "@pisync/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

const header = (id: string, cwd = "/srv/acme") =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-02-01T10:00:00.000Z", cwd })}\n`;
const userLine = (id: string, text: string, at: string) =>
  `${JSON.stringify({ type: "message", id, parentId: null, timestamp: at, message: { role: "user", content: text, timestamp: 1 } })}\n`;
const SECRET = "AKIAIOSFODNN7EXAMPLQ";

type Client = ReturnType<typeof client>;

describeOnEveryStore("team library", (pair) => {
  let now = Date.parse("2026-03-01T12:00:00.000Z");
  // A millisecond per reading: events made one after another have times in that order.
  const tick = () => {
    now += 1;
    return new Date(now);
  };
  let app: ReturnType<typeof createApp>;
  let owner: Client;
  let admin: Client;
  let member: Client;
  let outsider: Client;
  let teamId: string;

  const json = async (response: Response) => ({ status: response.status, body: await response.json() });
  const send = (c: Client, method: string, path: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: { ...c.auth, "Content-Type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const session = async (c: Client, id: string, text: string, at: string) => {
    const response = await c.patch(id, 0, header(id) + userLine(`${id}e1`, text, at));
    expect(response.status).toBeLessThan(300);
  };
  const invite = async (by: Client, role?: "member" | "admin") => {
    const response = await send(by, "POST", `/v1/teams/${teamId}/invites`, role ? { role } : {});
    return { status: response.status, body: (await response.json()) as { url: string; code?: string } };
  };
  const tokenOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);
  const put = (c: Client, id: string, team: string | null) => send(c, "PUT", `/v1/sessions/${id}/team`, { team });

  beforeAll(async () => {
    const stores = pair().stores;
    const keys = newShareKeys();
    app = createApp({ stores, shareKeys: async () => keys, clock: tick, log: () => {} });
    [owner, admin, member, outsider] = await Promise.all(
      ["olivia", "adam", "mia", "otto"].map(async (u) => client(app, await userToken(stores, u))),
    );
    await session(owner, "o1", "owner's notes on the deploy", "2026-02-01T10:00:01.000Z");
    await session(member, "m1", `mia's key is ${SECRET} for the bucket`, "2026-02-03T10:00:01.000Z");
    await session(member, "m2", "mia's private diary", "2026-02-04T10:00:01.000Z");
    await session(outsider, "x1", "otto's own work", "2026-02-05T10:00:01.000Z");
  });

  it("POST /v1/teams makes a team its maker owns; GET /v1/teams lists each user's own", async () => {
    const made = await json(await owner.post("/v1/teams", { name: "Acme" }));
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ id: expect.stringMatching(/^t[a-f0-9]{16}$/), name: "Acme", role: "owner" });
    teamId = made.body.id;
    expect((await json(await owner.get("/v1/teams"))).body).toEqual({
      teams: [{ id: teamId, name: "Acme", role: "owner" }],
    });
    expect((await json(await outsider.get("/v1/teams"))).body).toEqual({ teams: [] });
    expect((await json(await owner.post("/v1/teams", { name: "" }))).body.code).toBe("bad_body");
    expect((await json(await owner.post("/v1/teams", {}))).status).toBe(400);
  });

  it("invites: owner and admin get a one-time link, a member 403, anyone else 404; joining spends it", async () => {
    const forAdmin = await invite(owner, "admin");
    expect(forAdmin.status).toBe(201);
    expect(forAdmin.body.url).toMatch(/\/join\/pti_[A-Za-z0-9_-]{32}$/);
    const joined = await json(await admin.post(`/v1/join/${tokenOf(forAdmin.body.url)}`, {}));
    expect(joined).toEqual({ status: 200, body: { team: { id: teamId, name: "Acme" }, role: "admin" } });

    const forMember = await invite(admin);
    expect(forMember.status).toBe(201);
    const token = tokenOf(forMember.body.url);
    expect((await json(await member.post(`/v1/join/${token}`, {}))).body).toEqual({
      team: { id: teamId, name: "Acme" },
      role: "member",
    });
    // Spent: whoever tries it again finds nothing, the outsider included.
    expect([404, 410]).toContain((await member.post(`/v1/join/${token}`, {})).status);
    expect((await outsider.post(`/v1/join/${token}`, {})).status).toBe(404);
    expect((await outsider.post("/v1/join/pti_0000000000000000000000000000000a", {})).status).toBe(404);
    expect((await outsider.post("/v1/join/nonsense", {})).status).toBe(404);

    const byMember = await invite(member);
    expect(byMember).toMatchObject({ status: 403, body: { code: "forbidden" } });
    expect((await invite(outsider)).status).toBe(404);
    expect((await send(owner, "POST", "/v1/teams/t0000000000000000/invites", {})).status).toBe(404);
    expect((await send(owner, "POST", `/v1/teams/${teamId}/invites`, { role: "owner" })).status).toBe(400);
  });

  it("an invite works for 7 days", async () => {
    const { body } = await invite(owner);
    now += 7 * 86400_000 + 1000;
    try {
      expect([404, 410]).toContain((await outsider.post(`/v1/join/${tokenOf(body.url)}`, {})).status);
      expect((await json(await outsider.get("/v1/teams"))).body.teams).toEqual([]);
    } finally {
      now -= 7 * 86400_000 + 1000;
    }
  });

  it("PUT /v1/sessions/:id/team: the owner, a member, puts it in or takes it back; anyone else 404", async () => {
    expect(await json(await put(member, "m1", teamId))).toEqual({
      status: 200,
      body: { id: "m1", team: { id: teamId, name: "Acme" } },
    });
    expect((await put(owner, "o1", teamId)).status).toBe(200);
    // The outsider's own session, into a team they are not in; a member's, by someone else.
    expect((await put(outsider, "x1", teamId)).status).toBe(404);
    expect((await put(admin, "m2", teamId)).status).toBe(404);
    expect((await put(member, "nope", teamId)).status).toBe(404);
    expect((await put(member, "m2", "t0000000000000000")).status).toBe(404);
    expect((await send(member, "PUT", "/v1/sessions/m2/team", { team: 5 })).status).toBe(400);
    // In, then back out.
    expect((await put(member, "m2", teamId)).status).toBe(200);
    expect(await json(await put(member, "m2", null))).toEqual({ status: 200, body: { id: "m2", team: null } });
  });

  it("GET /v1/teams/:team/sessions: members see the team's, latest first, paged; never others; outsiders 404", async () => {
    const page = await json(await member.get(`/v1/teams/${teamId}/sessions`));
    expect(page.status).toBe(200);
    expect(page.body.sessions.map((s: { owner: string; id: string }) => `${s.owner}:${s.id}`)).toEqual([
      "mia:m1",
      "olivia:o1",
    ]);
    expect(page.body.sessions[0]).toMatchObject({ id: "m1", owner: "mia", cwd: "/srv/acme" });
    // Its title is its first message, masked as on share pages.
    expect(page.body.sessions[0].title).toContain("mia's key is");
    expect(JSON.stringify(page.body)).not.toContain(SECRET);
    // Read again, its texts come from what was masked the first time: the same answer.
    expect(await json(await member.get(`/v1/teams/${teamId}/sessions`))).toEqual(page);
    const first = await json(await admin.get(`/v1/teams/${teamId}/sessions?limit=1`));
    expect(first.body.sessions.map((s: { id: string }) => s.id)).toEqual(["m1"]);
    const second = await json(await admin.get(`/v1/teams/${teamId}/sessions?limit=1&cursor=${first.body.cursor}`));
    expect(second.body.sessions.map((s: { id: string }) => s.id)).toEqual(["o1"]);
    expect(second.body.cursor).toBeUndefined();
    expect((await outsider.get(`/v1/teams/${teamId}/sessions`)).status).toBe(404);
    expect((await member.get(`/v1/teams/${teamId}/sessions?cursor=garbage`)).status).toBe(400);
  });

  it("GET /v1/teams/:team/sessions: a write moves a session up the list; a foreign or bad cursor 400, an outsider's 404", async () => {
    const ids = async (c: Client, query = "") =>
      (await json(await c.get(`/v1/teams/${teamId}/sessions${query}`))).body.sessions.map(
        (s: { owner: string; id: string }) => `${s.owner}:${s.id}`,
      );
    expect(await ids(member)).toEqual(["mia:m1", "olivia:o1"]);
    // olivia writes on in o1: a later entry than any of mia's, so o1 comes first for every member.
    const offset = new TextEncoder().encode(
      header("o1") + userLine("o1e1", "owner's notes on the deploy", "2026-02-01T10:00:01.000Z"),
    ).length;
    const append = await owner.patch("o1", offset, userLine("o1e2", "and the rollback", "2026-02-09T10:00:00.000Z"));
    expect(append.status).toBeLessThan(300);
    expect(await ids(member)).toEqual(["olivia:o1", "mia:m1"]);
    const first = await json(await member.get(`/v1/teams/${teamId}/sessions?limit=1`));
    expect(first.body.sessions[0]).toMatchObject({ id: "o1", lastAt: "2026-02-09T10:00:00.000Z" });
    expect(await ids(member, `?limit=1&cursor=${first.body.cursor}`)).toEqual(["mia:m1"]);
    // A cursor is the team's own: another team's list, or a forged one, is refused with a code.
    const other = (await json(await admin.post("/v1/teams", { name: "Other" }))).body.id as string;
    const foreign = await json(await admin.get(`/v1/teams/${other}/sessions?cursor=${first.body.cursor}`));
    expect(foreign).toMatchObject({ status: 400, body: { code: "bad_query" } });
    const forged = Buffer.from(JSON.stringify([1, `team:${teamId}`, "9999", "no-colon"])).toString("base64url");
    expect(await json(await member.get(`/v1/teams/${teamId}/sessions?cursor=${forged}`))).toMatchObject({
      status: 400,
      body: { code: "bad_query" },
    });
    // Someone outside the team learns nothing, a valid cursor in hand or not.
    expect((await outsider.get(`/v1/teams/${teamId}/sessions?cursor=${first.body.cursor}`)).status).toBe(404);
    expect((await outsider.get(`/v1/teams/${other}/sessions`)).status).toBe(404);
  });

  it("GET /v1/teams/:team/sessions/:id/md: masked Markdown for members, by {id} or {owner}:{id}; 404 otherwise", async () => {
    for (const ref of ["m1", "mia:m1"]) {
      const response = await admin.get(`/v1/teams/${teamId}/sessions/${ref}/md`);
      expect(response.status).toBe(200);
      expect(response.headers.get("Content-Type")).toMatch(/^text\/markdown/);
      const text = await response.text();
      expect(text).toContain("mia's key is");
      expect(text).not.toContain(SECRET);
    }
    // The owner reads their own team session masked here too (the library shows it unmasked).
    expect(await (await member.get(`/v1/teams/${teamId}/sessions/m1/md`)).text()).not.toContain(SECRET);
    expect((await outsider.get(`/v1/teams/${teamId}/sessions/m1/md`)).status).toBe(404);
    expect((await admin.get(`/v1/teams/${teamId}/sessions/m2/md`)).status).toBe(404);
    expect((await admin.get(`/v1/teams/${teamId}/sessions/otto:x1/md`)).status).toBe(404);
  });

  it("a session id two members share names neither alone; {owner}:{id} names each", async () => {
    await session(admin, "m1", "adam's m1", "2026-02-02T10:00:00.000Z");
    expect((await put(admin, "m1", teamId)).status).toBe(200);
    try {
      expect((await member.get(`/v1/teams/${teamId}/sessions/m1/md`)).status).toBe(404);
      expect(await (await member.get(`/v1/teams/${teamId}/sessions/adam:m1/md`)).text()).toContain("adam's m1");
      expect(await (await member.get(`/v1/teams/${teamId}/sessions/mia:m1/md`)).text()).toContain("mia's key");
    } finally {
      expect((await put(admin, "m1", null)).status).toBe(200);
    }
  });

  it("a deleted session leaves its team: one made again under its id is not in it", async () => {
    await session(owner, "o2", "soon gone", "2026-02-06T10:00:00.000Z");
    expect((await put(owner, "o2", teamId)).status).toBe(200);
    expect((await owner.delete("/v1/sessions/o2")).status).toBe(204);
    await session(owner, "o2", "another life", "2026-02-07T10:00:00.000Z");
    const page = await json(await member.get(`/v1/teams/${teamId}/sessions`));
    expect(page.body.sessions.map((s: { id: string }) => s.id)).not.toContain("o2");
    expect((await member.get(`/v1/teams/${teamId}/sessions/olivia:o2/md`)).status).toBe(404);
  });

  it("GET /v1/teams/:team/members: members see every member and role; outsiders 404", async () => {
    const { status, body } = await json(await member.get(`/v1/teams/${teamId}/members`));
    expect(status).toBe(200);
    expect(body.members.map((m: { user: string; role: string }) => [m.user, m.role])).toEqual([
      ["olivia", "owner"],
      ["adam", "admin"],
      ["mia", "member"],
    ]);
    expect(body.members[0].joinedAt).toEqual(expect.any(String));
    expect((await outsider.get(`/v1/teams/${teamId}/members`)).status).toBe(404);
  });

  it("policy: owner or admin turn public links off; new links of team sessions 403 team_policy, earlier ones stop", async () => {
    const earlier = await json(await owner.post("/v1/sessions/o1/shares", {}));
    expect(earlier.status).toBe(201);
    const path = new URL(earlier.body.url).pathname;
    expect((await app.request(path, { headers: { Accept: "text/markdown" } })).status).toBe(200);

    expect(await json(await send(member, "PUT", `/v1/teams/${teamId}/policy`, { publicLinks: false }))).toMatchObject({
      status: 403,
      body: { code: "forbidden" },
    });
    expect((await send(outsider, "PUT", `/v1/teams/${teamId}/policy`, { publicLinks: false })).status).toBe(404);
    expect((await send(admin, "PUT", `/v1/teams/${teamId}/policy`, { publicLinks: "no" })).status).toBe(400);
    expect(await json(await send(admin, "PUT", `/v1/teams/${teamId}/policy`, { publicLinks: false }))).toEqual({
      status: 200,
      body: { publicLinks: false },
    });

    expect(await json(await owner.post("/v1/sessions/o1/shares", {}))).toMatchObject({
      status: 403,
      body: { code: "team_policy" },
    });
    expect([404, 410]).toContain((await app.request(path, { headers: { Accept: "text/markdown" } })).status);
    expect([404, 410]).toContain((await app.request(`${path}/raw`)).status);
    // A session outside the team is not the team's business.
    expect((await member.post("/v1/sessions/m2/shares", {})).status).toBe(201);

    // Back on, the earlier link answers again (it was never revoked, only held).
    expect((await send(owner, "PUT", `/v1/teams/${teamId}/policy`, { publicLinks: true })).status).toBe(200);
    expect((await app.request(path, { headers: { Accept: "text/markdown" } })).status).toBe(200);
  });

  it("GET /v1/teams/:team/audit: owner and admin read every kind of event, newest first; a member 403; outsiders 404", async () => {
    const { status, body } = await json(await admin.get(`/v1/teams/${teamId}/audit?limit=100`));
    expect(status).toBe(200);
    const actions = new Set(body.events.map((e: { action: string }) => e.action));
    for (const action of [
      "invite.created",
      "member.joined",
      "session.added",
      "session.removed",
      "share.created",
      "policy.changed",
    ]) {
      expect(actions, action).toContain(action);
    }
    expect(body.events[0]).toMatchObject({ actor: "olivia", action: "policy.changed", at: expect.any(String) });
    const ats = body.events.map((e: { at: string }) => e.at);
    expect([...ats].sort().reverse()).toEqual(ats);
    const first = await json(await owner.get(`/v1/teams/${teamId}/audit?limit=2`));
    expect(first.body.events).toHaveLength(2);
    const next = await json(await owner.get(`/v1/teams/${teamId}/audit?limit=2&cursor=${first.body.cursor}`));
    expect(next.body.events[0]).toEqual(body.events[2]);
    expect(await json(await member.get(`/v1/teams/${teamId}/audit`))).toMatchObject({
      status: 403,
      body: { code: "forbidden" },
    });
    expect((await outsider.get(`/v1/teams/${teamId}/audit`)).status).toBe(404);
  });

  describe("DELETE /v1/teams/:team/members/:user", () => {
    it("a member may not remove another (403), an outsider finds nothing (404), nobody removes the owner", async () => {
      expect(await json(await member.delete(`/v1/teams/${teamId}/members/adam`))).toMatchObject({
        status: 403,
        body: { code: "forbidden" },
      });
      expect((await outsider.delete(`/v1/teams/${teamId}/members/mia`)).status).toBe(404);
      expect((await admin.delete(`/v1/teams/${teamId}/members/olivia`)).status).toBe(403);
      expect((await admin.delete(`/v1/teams/${teamId}/members/nobody`)).status).toBe(404);
    });

    it("an admin removes a member: their next team request is 404 and their sessions leave with them", async () => {
      expect((await admin.delete(`/v1/teams/${teamId}/members/mia`)).status).toBe(204);
      expect((await member.get(`/v1/teams/${teamId}/sessions`)).status).toBe(404);
      expect((await member.get(`/v1/teams/${teamId}/members`)).status).toBe(404);
      expect((await put(member, "m1", teamId)).status).toBe(404);
      const left = await json(await owner.get(`/v1/teams/${teamId}/sessions`));
      expect(left.body.sessions.map((s: { id: string }) => s.id)).toEqual(["o1"]);
      expect((await owner.get(`/v1/teams/${teamId}/sessions/mia:m1/md`)).status).toBe(404);
      const audit = await json(await owner.get(`/v1/teams/${teamId}/audit?limit=3`));
      expect(audit.body.events[0]).toMatchObject({ action: "member.removed", actor: "adam", target: "mia" });
      expect((await json(await member.get("/v1/teams"))).body.teams).toEqual([]);
    });

    it("a member may leave", async () => {
      expect((await admin.delete(`/v1/teams/${teamId}/members/adam`)).status).toBe(204);
      expect((await admin.get(`/v1/teams/${teamId}/members`)).status).toBe(404);
    });
  });
});
