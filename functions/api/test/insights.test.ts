/**
 * Insights over HTTP on both stores: `/v1/insights` (the CLI's), the library's `/insights` page
 * and its CSV: usage by device (the token that sent the lines), tenancy, ranges checked, and
 * hostile names escaped in the page and defused in the CSV.
 */
import { Tokens } from "@pisync/core";
import type { InsightsReport } from "@pisync/protocol";
import { assistantMessage, entry, line, openPair, type Pair, STORE_NAMES, usage, userMessage } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client } from "./harness.js";

const HOSTILE_MODEL = `gpt<script>alert(1)</script>`;
/** A folder name a spreadsheet would take for a formula. */
const FORMULA_CWD = `=HYPERLINK("http://evil.example","x")`;
const day = (d: string, s: number) => `2026-04-${d}T10:00:${String(s).padStart(2, "0")}.000Z`;

/** A session on day `d`: one user message and one reply costing `cost` by `model`. */
function session(id: string, cwd: string, d: string, model: string, cost: number): string {
  return [
    line({ type: "session", version: 3, id, timestamp: day(d, 0), cwd }),
    line({ ...entry(`${id}-u`, null, 1, userMessage("hi")), timestamp: day(d, 1) }),
    line({
      ...entry(`${id}-a`, `${id}-u`, 2, assistantMessage("hello", { model, usage: usage(100, cost, 10) })),
      timestamp: day(d, 3),
    }),
  ].join("");
}

describe.each(STORE_NAMES)("insights (%s)", (storeName) => {
  let pair: Pair;
  let app: ReturnType<typeof createApp>;
  let laptop: ReturnType<typeof client>;
  let desktop: ReturnType<typeof client>;
  let bob: ReturnType<typeof client>;
  const range = "from=2026-04-01&to=2026-04-30";

  beforeAll(async () => {
    pair = await openPair(storeName);
    app = createApp({ stores: pair.stores, log: () => {}, clock: () => new Date("2026-04-30T12:00:00.000Z") });
    const tokens = new Tokens(pair.stores.meta);
    laptop = client(app, (await tokens.create("alice", "Laptop")).token);
    desktop = client(app, (await tokens.create("alice", "Desktop")).token);
    bob = client(app, (await tokens.create("bob", "Bob's")).token);
    expect((await laptop.put("a1", session("a1", "/w/shop", "02", "claude-sonnet-4-5", 1.5))).status).toBe(200);
    expect((await desktop.put("a2", session("a2", FORMULA_CWD, "03", HOSTILE_MODEL, 0.5))).status).toBe(200);
    expect((await bob.put("b1", session("b1", "/home/bob/secret-project", "03", "bob-model", 9))).status).toBe(200);
  });
  afterAll(async () => {
    await pair?.close();
  });

  it("/v1/insights sums a user's sessions by model, project, machine and day, and nobody else's", async () => {
    const res = await laptop.get(`/v1/insights?${range}`);
    expect(res.status).toBe(200);
    const report = (await res.json()) as InsightsReport;
    expect(report.totals).toMatchObject({ cost: 2, tokens: 220, turns: 2, sessions: 2 });
    expect(report.byDevice.map((d) => [d.label, d.cost])).toEqual([
      ["Laptop", 1.5],
      ["Desktop", 0.5],
    ]);
    expect(report.byProject.map((p) => p.label)).toEqual(["/w/shop", FORMULA_CWD]);
    expect(report.byModel.map((m) => m.key)).toEqual(["anthropic/claude-sonnet-4-5", `anthropic/${HOSTILE_MODEL}`]);
    expect(report.byDay.find((d) => d.key === "2026-04-02")?.cost).toBe(1.5);
    const text = JSON.stringify(report);
    // Bob's session id as a value (quoted: random token ids in device keys may hold "b1").
    for (const bobs of ['"b1"', "secret-project", "bob-model", "Bob's"]) expect(text).not.toContain(bobs);

    const his = (await (await bob.get(`/v1/insights?${range}`)).json()) as InsightsReport;
    expect(his.totals).toMatchObject({ cost: 9, sessions: 1 });
    expect(JSON.stringify(his)).not.toContain("/w/shop");
  });

  it("/v1/insights takes `since`, and refuses a bad range or a missing token", async () => {
    const since = (await (await laptop.get("/v1/insights?since=2w")).json()) as InsightsReport;
    expect([since.from, since.to]).toEqual(["2026-04-17", "2026-04-30"]);
    expect(since.totals.cost).toBe(0);
    for (const bad of ["since=3x", "from=2026-04-10&to=2026-04-01", "from=yesterday"]) {
      const res = await laptop.get(`/v1/insights?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { code: string }).code, bad).toMatch(/^bad_/);
    }
    expect((await app.request("/v1/insights")).status).toBe(401);
  });

  it("/v1/insights takes any range: all time and long ones start at the first day with usage", async () => {
    const all = (await (await laptop.get("/v1/insights?since=all")).json()) as InsightsReport;
    expect([all.from, all.to]).toEqual(["2026-04-02", "2026-04-30"]);
    expect(all.totals).toMatchObject({ cost: 2, sessions: 2 });
    expect(all.byDay).toHaveLength(29);
    const long = (await (await laptop.get("/v1/insights?from=2020-01-01")).json()) as InsightsReport;
    expect([long.from, long.to, long.totals.cost]).toEqual(["2026-04-02", "2026-04-30", 2]);
    const future = (await (await laptop.get("/v1/insights?from=2026-04-01&to=2099-12-31")).json()) as InsightsReport;
    expect([future.from, future.to]).toEqual(["2026-04-02", "2026-04-03"]);
    // Another user's days are not this user's first day.
    const bobs = (await (await bob.get("/v1/insights?since=all")).json()) as InsightsReport;
    expect([bobs.from, bobs.totals.cost]).toEqual(["2026-04-03", 9]);
  });

  it("/insights offers all time, and answers a refused range with a page, not JSON", async () => {
    const page = await (await laptop.get("/insights?since=all", { Accept: "text/html" })).text();
    expect(page).toMatch(/<a href="\/insights\?since=all&amp;per=week" aria-current="true">all time<\/a>/);
    expect(page).toContain('value="2026-04-02"');
    const refused = await laptop.get("/insights?from=2026-04-10&to=2026-04-01", { Accept: "text/html" });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(refused.headers.get("Content-Security-Policy")).toContain("default-src");
    const text = await refused.text();
    expect(text).toContain("from must not be after to");
    expect(text).toContain('<form method="get" action="/insights"');
    expect(text).toContain('value="2026-04-10"');
    const malformed = await laptop.get("/insights?since=%3Cscript%3E", { Accept: "text/html" });
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).not.toContain("<script>");
    const csv = await laptop.get("/insights.csv?from=2026-04-10&to=2026-04-01", { Accept: "text/html" });
    expect([csv.status, csv.headers.get("Content-Type")?.startsWith("text/html")]).toEqual([400, true]);
    const csvApi = await laptop.get("/insights.csv?from=2026-04-10&to=2026-04-01");
    expect(((await csvApi.json()) as { code: string }).code).toBe("bad_request");
  });

  it("/insights charts name their axes and print their values", async () => {
    const page = await (await laptop.get(`/insights?${range}`, { Accept: "text/html" })).text();
    const chart = /<svg class="chart" id="model"[\s\S]*?<\/svg>/.exec(page)?.[0] ?? "";
    expect(chart).toContain(">Cost (USD)</text>");
    expect(chart).toContain(">Model</text>");
    // Ticks at 0 and the highest value, and each bar's value above it.
    expect(chart).toMatch(/class="tick-label"[^>]*>\$0\.0000</);
    expect(chart).toMatch(/class="tick-label"[^>]*>\$1\.50</);
    expect(chart.match(/class="value"/g)).toHaveLength(2);
    expect(chart).toContain("&lt;script&gt;");
    const time = /<svg class="chart" id="time"[\s\S]*?<\/svg>/.exec(page)?.[0] ?? "";
    expect(time).toContain(">Day (UTC)</text>");
    // Thirty days: the first, middle and last are named under the axis; the highest value is printed.
    expect(time.match(/class="x-label"/g)).toHaveLength(3);
    expect(time).toContain(">2026-04-01</text>");
    expect(time.match(/class="value"/g)).toHaveLength(1);
    const tools = /<svg class="chart" id="tools"[\s\S]*?<\/svg>/.exec(page)?.[0] ?? "";
    expect(tools === "" || tools.includes(">Calls</text>")).toBe(true);
  });

  it("/insights draws accessible charts with their numbers beside them, names escaped", async () => {
    const res = await laptop.get(`/insights?${range}`, { Accept: "text/html" });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src");
    const page = await res.text();
    expect(page).toContain('<svg class="chart"');
    expect(page).toContain('role="img"');
    expect(page).toMatch(/<table class="insights-table"><caption>By Machine<\/caption>/);
    expect(page).toContain("Laptop");
    expect(page).toContain("$1.50");
    expect(page).not.toContain("<script>alert(1)</script>");
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).not.toContain("secret-project");
    // Not signed in: the sign-in hint, never the page.
    expect((await app.request(`/insights?${range}`, { headers: { Accept: "text/html" } })).status).toBe(401);
  });

  it("/insights.csv downloads every breakdown, formulas defused", async () => {
    const res = await laptop.get(`/insights.csv?${range}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/csv/);
    expect(res.headers.get("Content-Disposition")).toContain("pisync-insights-2026-04-01-to-2026-04-30.csv");
    const csv = await res.text();
    const rows = csv.trim().split("\r\n");
    expect(rows[0]).toMatch(/^breakdown,key,label,cost_usd,tokens/);
    expect(rows.some((r) => r.startsWith('"machine",') && r.includes('"Laptop"') && r.includes(",1.5,"))).toBe(true);
    expect(rows.filter((r) => r.startsWith('"day",'))).toHaveLength(30);
    // A folder name that starts a formula stays text in a spreadsheet.
    expect(csv).not.toMatch(/(^|,)"=/m);
    expect(csv).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(csv).not.toContain("secret-project");
  });
});
