/**
 * A stored number that cannot be printed (a head kept before usage was clamped holds `null`
 * where a sum overflowed; Infinity, NaN) shows as "—" on every page, card, and document, and as
 * an empty field in the CSV: nothing throws, nothing writes "Infinity", "NaN" or "null".
 */
import { describe, expect, it } from "vitest";
import { factsLine, markdownHead, renderPage, type SessionPageView } from "../src/index.js";
import {
  duration,
  type InsightsPageReport,
  insightsCsv,
  renderInsightsPage,
  renderSessionsPage,
  shortTokens,
} from "../src/library/index.js";

const BAD = [null, undefined, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] as unknown as number[];
const NOT_SHOWN = /Infinity|NaN|null|undefined|∞/;

const facts = (n: number) => ({
  title: "t",
  models: [],
  messages: 1,
  toolCalls: 0,
  tokens: n,
  cost: n,
  totalsOf: "this branch",
});

const view = (n: number): SessionPageView => ({
  base: "/s/t",
  facts: facts(n),
  entries: [
    {
      id: "a1",
      type: "message",
      entry: {
        type: "message",
        id: "a1",
        message: {
          role: "assistant",
          content: [{ type: "text", text: "ok" }],
          usage: { totalTokens: n, cost: { total: n } },
        },
      },
    },
  ],
  window: { start: 0, end: 1, total: 1 },
  leafId: "a1",
  branches: false,
  labels: new Map(),
  edits: new Map(),
  notes: [],
  live: false,
});

const sums = (n: number) => ({
  input: n,
  output: n,
  cacheRead: n,
  cacheWrite: n,
  tokens: n,
  cost: n,
  ms: n,
  turns: 1,
  sessions: 1,
});

describe("numbers a page cannot print", () => {
  it("show as — on the share page, its card line and the Markdown head", () => {
    for (const n of BAD) {
      const html = renderPage(view(n));
      expect(html).toContain("— tokens · —");
      expect(html.replace(/<script[\s\S]*?<\/script>/g, "")).not.toMatch(/\bInfinity\b|\bNaN\b|\$null/);
      expect(factsLine(facts(n))).toBe("1 message · 0 tool calls · — tokens · —");
      expect(markdownHead(facts(n), { leafId: null, notes: [] })).toContain("— tokens, —");
    }
  });

  it("show as — in the library's list and insights; the CSV leaves the field empty", () => {
    for (const n of BAD) {
      const html = renderSessionsPage(
        { signedIn: true, csrfToken: "c" },
        {
          filter: {},
          searchable: false,
          list: {
            sessions: [
              { sessionId: "s1", models: [], lastAt: "2026-04-02T10:00:00.000Z", entries: 3, tokens: n, cost: n },
            ],
            folders: [],
            models: [],
          },
        },
      );
      expect(html).toContain("— tokens · —");
      expect(shortTokens(n)).toBe("—");
      expect(duration(n)).toBe("—");
      const group = { key: "2026-04-01", label: "2026-04-01", ...sums(n) };
      const report: InsightsPageReport = {
        from: "2026-04-01",
        to: "2026-04-01",
        totals: sums(n),
        byDay: [group],
        byWeek: [group],
        byModel: [group],
        byProject: [group],
        byDevice: [group],
        byTool: [{ tool: "read", calls: 1, ms: n, sessions: 1 }],
        topSessions: [{ sessionId: "s1", title: "t", cost: n, tokens: n, turns: 1 }],
        uncounted: 0,
      };
      const page = renderInsightsPage({ signedIn: true, csrfToken: "c" }, { report, per: "day" });
      expect(page.replace(/<script[\s\S]*?<\/script>/g, "")).not.toMatch(/\bInfinity\b|\bNaN\b|\$null/);
      expect(page).toContain("<dd>—</dd>");
      const csv = insightsCsv({ ...report, byWeek: [], byModel: [], byProject: [], byDevice: [], byTool: [] });
      expect(csv).not.toMatch(NOT_SHOWN);
      expect(csv.split("\r\n")[1]).toBe('"day","2026-04-01","2026-04-01",,,,,,,,1,0,1');
    }
  });
});
