/**
 * `GET /v1/insights?team=` on both stores: the team's sessions' usage (every member's), never a
 * session outside the team; the split by member for owners and admins only; 404 for anyone else.
 */
import type { InsightsReport } from "@pisync/protocol";
import { assistantMessage, describeOnEveryStore, entry, line, usage, userMessage } from "@pisync/testing";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

const SECRET = "AKIAIOSFODNN7EXAMPLQ";
const at = (s: number) => `2026-04-02T10:00:${String(s).padStart(2, "0")}.000Z`;

/** A session: one user message and one reply costing `cost` by `model`. */
function session(id: string, cwd: string, model: string, cost: number, question = "hi"): string {
  return [
    line({ type: "session", version: 3, id, timestamp: at(0), cwd }),
    line({ ...entry(`${id}-u`, null, 1, userMessage(question)), timestamp: at(1) }),
    line({
      ...entry(`${id}-a`, `${id}-u`, 2, assistantMessage("hello", { model, usage: usage(100, cost, 10) })),
      timestamp: at(3),
    }),
  ].join("");
}

type Client = ReturnType<typeof client>;

describeOnEveryStore("team insights", (pair) => {
  let app: ReturnType<typeof createApp>;
  let owner: Client;
  let member: Client;
  let outsider: Client;
  let teamId: string;
  const range = "from=2026-04-01&to=2026-04-30";
  const report = async (c: Client, team = teamId) => {
    const response = await c.get(`/v1/insights?${range}&team=${team}`);
    return { status: response.status, body: (await response.json()) as InsightsReport & { byMember?: unknown[] } };
  };

  beforeAll(async () => {
    const stores = pair().stores;
    app = createApp({ stores, log: () => {}, clock: () => new Date("2026-04-30T12:00:00.000Z") });
    [owner, member, outsider] = await Promise.all(
      ["olivia", "mia", "otto"].map(async (u) => client(app, await userToken(stores, u))),
    );
    teamId = (await (await owner.post("/v1/teams", { name: "Acme" })).json()).id;
    const link = (await (await owner.post(`/v1/teams/${teamId}/invites`, {})).json()).url as string;
    expect((await member.post(`/v1/join/${link.slice(link.lastIndexOf("/") + 1)}`, {})).status).toBe(200);
    expect((await owner.put("o1", session("o1", "/srv/acme", "model-a", 2))).status).toBe(200);
    expect((await member.put("m1", session("m1", "/srv/acme", "model-b", 1, `key ${SECRET}`))).status).toBe(200);
    expect((await member.put("m2", session("m2", "/home/mia/secret", "model-private", 50))).status).toBe(200);
    expect((await outsider.put("x1", session("x1", "/x", "model-x", 7))).status).toBe(200);
    for (const [c, id] of [
      [owner, "o1"],
      [member, "m1"],
    ] as const) {
      const put = await app.request(`/v1/sessions/${id}/team`, {
        method: "PUT",
        headers: { ...c.auth, "Content-Type": "application/json" },
        body: JSON.stringify({ team: teamId }),
      });
      expect(put.status).toBe(200);
    }
  });

  it("sums the team's sessions only, by model and project; members see no split by member", async () => {
    const { status, body } = await report(member);
    expect(status).toBe(200);
    expect(body.totals).toMatchObject({ cost: 3, sessions: 2 });
    expect(body.byModel.map((g) => [g.label, g.cost])).toEqual([
      ["anthropic/model-a", 2],
      ["anthropic/model-b", 1],
    ]);
    expect(body.byProject.map((g) => g.label)).toEqual(["/srv/acme"]);
    expect(body.byDevice).toEqual([]);
    expect(body.byMember).toBeUndefined();
    const text = JSON.stringify(body);
    for (const word of ["model-private", "/home/mia/secret", "model-x", SECRET]) expect(text).not.toContain(word);
    expect(body.topSessions.map((s) => s.sessionId)).toEqual(["olivia:o1", "mia:m1"]);
  });

  it("owners and admins see the totals of each member", async () => {
    const { body } = await report(owner);
    expect(body.byMember?.map((g) => [(g as { label: string }).label, (g as { cost: number }).cost])).toEqual([
      ["olivia", 2],
      ["mia", 1],
    ]);
  });

  it("anyone else finds no team (404); without team each user's own report is unchanged", async () => {
    expect((await report(outsider)).status).toBe(404);
    expect((await report(owner, "t0000000000000000")).status).toBe(404);
    const own = (await (await member.get(`/v1/insights?${range}`)).json()) as InsightsReport;
    expect(own.totals).toMatchObject({ cost: 51, sessions: 2 });
  });
});
