/**
 * `GET /v1/teams/:team/sessions/:id/raw` on both store pairs: a team session's JSONL, whole and
 * masked as a share link's `/raw` (what `pisync pull --team` forks), for members only; a
 * non-member, a session out of the team and one taken back all get 404.
 */
import { parseSession } from "@pisync/format";
import { describeOnEveryStore } from "@pisync/testing";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

const SECRET = "AKIAIOSFODNN7EXAMPLQ";
const header = (id: string) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-02-01T10:00:00.000Z", cwd: "/srv/acme" })}\n`;
const userLine = (id: string, parentId: string | null, text: string) =>
  `${JSON.stringify({ type: "message", id, parentId, timestamp: "2026-02-01T10:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } })}\n`;

type Client = ReturnType<typeof client>;

describeOnEveryStore("a team session's raw JSONL", (pair) => {
  let app: ReturnType<typeof createApp>;
  let owner: Client;
  let member: Client;
  let outsider: Client;
  let teamId: string;
  const raw = (c: Client, ref: string, team = teamId) => c.get(`/v1/teams/${team}/sessions/${ref}/raw`);
  const put = (c: Client, id: string, team: string | null) =>
    app.request(`/v1/sessions/${id}/team`, {
      method: "PUT",
      headers: { ...c.auth, "Content-Type": "application/json" },
      body: JSON.stringify({ team }),
    });

  beforeAll(async () => {
    const stores = pair().stores;
    app = createApp({ stores, log: () => {} });
    [owner, member, outsider] = await Promise.all(
      ["olivia", "mia", "otto"].map(async (u) => client(app, await userToken(stores, u))),
    );
    const body =
      header("m1") + userLine("e1", null, `mia's key is ${SECRET} for the bucket`) + userLine("e2", "e1", "and more");
    expect((await member.patch("m1", 0, body)).status).toBeLessThan(300);
    expect((await member.patch("m2", 0, header("m2") + userLine("e1", null, "mia's own"))).status).toBeLessThan(300);
    expect((await outsider.patch("x1", 0, header("x1") + userLine("e1", null, "otto's"))).status).toBeLessThan(300);
    teamId = (await (await owner.post("/v1/teams", { name: "Acme" })).json()).id;
    const link = (await (await owner.post(`/v1/teams/${teamId}/invites`, {})).json()).url as string;
    expect((await member.post(`/v1/join/${link.slice(link.lastIndexOf("/") + 1)}`, {})).status).toBe(200);
    expect((await put(member, "m1", teamId)).status).toBe(200);
  });

  it("answers members the whole session, a valid session file, credentials masked; by {id} and {owner}:{id}", async () => {
    for (const [c, ref] of [
      [owner, "m1"],
      [owner, "mia:m1"],
      [member, "m1"],
    ] as const) {
      const response = await raw(c, ref);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("application/x-ndjson");
      expect(response.headers.get("cache-control")).toBe("no-store");
      const text = await response.text();
      expect(text).not.toContain(SECRET);
      expect(text).toContain("for the bucket");
      const parsed = parseSession(new TextEncoder().encode(text));
      expect(parsed.header?.id).toBe("m1");
      expect(parsed.entries.map((e) => e.id)).toEqual(["e1", "e2"]);
    }
  });

  it("answers 404 to a non-member, for a session out of the team, an unknown team, and once taken back", async () => {
    expect((await raw(outsider, "m1")).status).toBe(404);
    expect((await raw(outsider, "mia:m1")).status).toBe(404);
    expect((await raw(owner, "m2")).status).toBe(404);
    expect((await raw(owner, "mia:m2")).status).toBe(404);
    expect((await raw(owner, "otto:x1")).status).toBe(404);
    expect((await raw(owner, "m1", "t0000000000000000")).status).toBe(404);
    expect((await put(member, "m1", null)).status).toBe(200);
    const gone = await raw(owner, "m1");
    expect(gone.status).toBe(404);
    expect((await gone.json()).code).toBe("not_found");
  });
});
