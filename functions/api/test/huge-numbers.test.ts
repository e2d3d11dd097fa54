/**
 * Numbers a line can hold, on both stores: `cost.total` of `1e308` (twice: their sum overflows),
 * `-1e308`, `1e400` (JSON reads Infinity), strings that make NaN, token counts of `1e308`. Usage
 * is clamped as it is stored (tokens to 1e12, dollars to 1e9 per field), so every sum stays
 * finite, and no page, download, image or report fails on them or writes Infinity or null.
 */
import { newShareKeys } from "@pisync/core";
import { USAGE_COST_MAX, USAGE_TOKENS_MAX } from "@pisync/format";
import type { InsightsReport } from "@pisync/protocol";
import { describeOnEveryStore } from "@pisync/testing";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

const ts = (s: number) => `2026-04-02T10:00:${String(s).padStart(2, "0")}.000Z`;

/** An assistant line whose usage is `usage`, written as raw JSON text (so `1e400` stays itself). */
const reply = (id: string, parent: string, s: number, usage: string) =>
  `{"type":"message","id":"${id}","parentId":"${parent}","timestamp":"${ts(s)}","message":{"role":"assistant","provider":"anthropic","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"usage":${usage},"stopReason":"stop","timestamp":${s}}}\n`;

/** A session whose usage fields hold every number and non-number a line can hold. */
function session(id: string): string {
  return [
    `${JSON.stringify({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/w/huge" })}\n`,
    `${JSON.stringify({ type: "message", id: "u1", parentId: null, timestamp: ts(1), message: { role: "user", content: "spend", timestamp: 1 } })}\n`,
    reply("a1", "u1", 2, '{"input":1e308,"output":1e308,"totalTokens":1e308,"cost":{"total":1e308}}'),
    reply("a2", "a1", 3, '{"input":1,"output":1,"totalTokens":2,"cost":{"total":1e308}}'),
    reply("a3", "a2", 4, '{"input":-1e308,"totalTokens":-1e308,"cost":{"total":-1e308}}'),
    reply("a4", "a3", 5, '{"input":1e400,"totalTokens":1e400,"cost":{"total":1e400}}'),
    reply("a5", "a4", 6, '{"input":"NaN","output":"1e999","totalTokens":"x","cost":{"total":"NaN"}}'),
    reply("a6", "a5", 7, '{"input":null,"cost":{"total":{"nested":1}}}'),
    `{"type":"usage","id":"g1","parentId":"a6","timestamp":"${ts(8)}","provider":"anthropic","model":"warm","usage":{"input":1e308,"totalTokens":1e308,"cost":{"total":1e308}}}\n`,
  ].join("");
}

describeOnEveryStore("numbers no page fails on", (pair) => {
  let app: ReturnType<typeof createApp>;
  let c: ReturnType<typeof client>;
  let share: string;
  const id = `huge-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    const keys = newShareKeys();
    app = createApp({
      stores: pair().stores,
      shareKeys: async () => keys,
      log: () => {},
      clock: () => new Date("2026-04-30T12:00:00.000Z"),
    });
    c = client(app, await userToken(pair().stores, "huge-owner"));
    expect((await c.patch(id, 0, session(id))).status).toBe(200);
    const r = await c.post(`/v1/sessions/${id}/shares`, {});
    share = new URL(((await r.json()) as { url: string }).url).pathname;
  });

  it("the stored totals are clamped and finite", async () => {
    const meta = (await (await c.get(`/v1/sessions/${id}`, { Accept: "application/json" })).json()) as {
      tokens?: number;
      cost?: number;
      summary?: { tokens: number; cost: number };
    };
    const { tokens, cost } = meta.summary ?? (meta as { tokens: number; cost: number });
    // Three fields at the token bound (a1, a4, the usage entry) and a1's 2, a2's 2; cost: four at the bound.
    expect(tokens).toBe(3 * USAGE_TOKENS_MAX + 2);
    expect(cost).toBe(4 * USAGE_COST_MAX);
  });

  it("every page, download and image answers, showing no Infinity, NaN or null", async () => {
    const html = { Accept: "text/html" };
    for (const [path, headers] of [
      ["/", html],
      [`/sessions/${id}`, html],
      ["/insights?from=2026-04-01&to=2026-04-30", html],
      ["/insights.csv?from=2026-04-01&to=2026-04-30", {}],
      [`/v1/sessions/${id}/md`, {}],
      [`/v1/sessions?limit=10`, {}],
      [`/v1/insights?from=2026-04-01&to=2026-04-30`, {}],
    ] as const) {
      const r = await c.get(path, headers);
      const body = await r.text();
      expect(r.status, `${path}: ${body.slice(0, 300)}`).toBe(200);
      expect(body, path).not.toMatch(/Infinity|NaN|\$null|null tokens|∞/);
    }
    for (const path of [share, `${share}/md`, `${share}/entries?from=0`]) {
      const r = await app.request(path, { headers: { Accept: "text/html" } });
      const body = await r.text();
      expect(r.status, `${path}: ${body.slice(0, 300)}`).toBe(200);
      expect(body, path).not.toMatch(/Infinity|NaN|\$null|null tokens|∞/);
    }
    const image = await app.request(`${share}/preview.png`);
    expect(image.status).toBe(200);
    expect(image.headers.get("Content-Type")).toBe("image/png");
  }, 60_000);

  it("insights add the clamped usage: cost is a finite number, never null", async () => {
    const report = (await (await c.get("/v1/insights?from=2026-04-01&to=2026-04-30")).json()) as InsightsReport;
    expect(report.totals.cost).toBe(4 * USAGE_COST_MAX);
    expect(Number.isFinite(report.totals.tokens)).toBe(true);
    for (const group of [...report.byDay, ...report.byModel, ...report.byProject, ...report.byDevice]) {
      expect(Number.isFinite(group.cost), group.key).toBe(true);
      expect(Number.isFinite(group.tokens), group.key).toBe(true);
    }
    const csv = await (await c.get("/insights.csv?from=2026-04-01&to=2026-04-30")).text();
    expect(csv).toContain(`"/w/huge",${4 * USAGE_COST_MAX},`);
  });
});
