/**
 * The usage port's contract: reports read the days of their range, as commits left them.
 */
import { describe, expect, it } from "vitest";
import { changedUsageDays, type SessionHead, type ToolRow, type UsageRow } from "../src/index.js";
import { type ContractContext, head } from "./contract.js";

/** The usage port's part of the storage contract, run by `describeStoreContract` on every store. */
export function describeUsageContract({ stores, user }: ContractContext) {
  describe("insights' usage by day", () => {
    /** A head of `revision` whose rollup has these rows (and tools), in folder `cwd`. */
    const withUsage = (
      u: string,
      id: string,
      revision: number,
      rows: UsageRow[],
      tools: ToolRow[] = [],
      cwd = "/w/app",
    ): SessionHead => {
      const h = head(u, id, revision, `2026-01-0${revision}T00:00:00.000Z`);
      return { ...h, summary: { ...h.summary, cwd, usage: { rows, tools } } };
    };
    const row = (day: string, model: string, cost: number): UsageRow => [day, model, "dev1", 10, 5, 0, 0, cost, 100, 1];
    /** Commits `next` over `before`, with the days it changes, as core's appends do. */
    const commitOver = (before: SessionHead | undefined, next: SessionHead) =>
      stores.meta.commit({
        head: next,
        expectedRevision: before?.revision ?? null,
        usageDays: changedUsageDays(before, next),
      });
    type Usages = Record<string, { cwd?: string; rows: UsageRow[]; tools: ToolRow[] }>;
    /** What a report of the range must read: every head's rollup rows in it, by session. */
    const expected = async (u: string, from: string, to: string) => {
      const sessions: Usages = {};
      for (const card of await stores.meta.listCards(u)) {
        const rows = card.usage?.rows.filter((r) => r[0] >= from && r[0] <= to) ?? [];
        const tools = card.usage?.tools.filter((r) => r[0] >= from && r[0] <= to) ?? [];
        if (rows.length || tools.length) sessions[card.sessionId] = { cwd: card.cwd, rows, tools };
      }
      return sessions;
    };
    /** Each session's rows and tools by day, then bucket or tool (stores give them in any order). */
    const sorted = (sessions: Usages) => {
      const byDay = (a: unknown[], b: unknown[]) =>
        String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1]));
      for (const s of Object.values(sessions)) {
        s.rows.sort(byDay);
        s.tools.sort(byDay);
      }
      return sessions;
    };
    const read = async (u: string, from: string, to: string) => {
      const usage = await stores.meta.listUsage(u, { from, to });
      const sessions: Usages = {};
      for (const s of usage.sessions) sessions[s.sessionId] = { cwd: s.cwd, rows: s.rows, tools: s.tools };
      return { sessions: sorted(sessions), uncounted: usage.uncounted };
    };

    it("a report reads the days of its range: every session's usage in it, as commits left it, and nobody else's", async () => {
      const [u, other] = [user(), user()];
      const a1 = withUsage(
        u,
        "a",
        1,
        [row("2025-01-01", "m/x", 1), row("2025-01-03", "m/x", 2)],
        [["2025-01-03", "read", 2, 40]],
      );
      await commitOver(undefined, a1);
      const b1 = withUsage(u, "b", 1, [row("2025-01-03", "m/y", 4)], [], "/w/other");
      await commitOver(undefined, b1);
      // A head from before rollups were kept: counted apart, never summed.
      const legacy = head(u, "c", 1, "2026-01-01T00:00:00.000Z");
      await commitOver(undefined, legacy);
      await commitOver(undefined, withUsage(other, "a", 1, [row("2025-01-03", "m/z", 8)]));

      expect(await read(u, "2025-01-02", "2025-01-31")).toEqual({
        sessions: {
          a: { cwd: "/w/app", rows: [row("2025-01-03", "m/x", 2)], tools: [["2025-01-03", "read", 2, 40]] },
          b: { cwd: "/w/other", rows: [row("2025-01-03", "m/y", 4)], tools: [] },
        },
        uncounted: 1,
      });
      expect((await read(u, "2025-02-01", "2025-02-28")).sessions).toEqual({});

      // The next commit moves a day and adds one; a new generation leaves days behind.
      const a2 = withUsage(u, "a", 2, [
        row("2025-01-01", "m/x", 1),
        row("2025-01-03", "m/x", 3),
        row("2025-02-01", "m/w", 1),
      ]);
      await commitOver(a1, a2);
      expect((await read(u, "2025-01-01", "2025-12-31")).sessions).toEqual(
        sorted(await expected(u, "2025-01-01", "2025-12-31")),
      );
      const a3 = withUsage(u, "a", 3, [row("2025-02-01", "m/w", 5)]);
      await commitOver(a2, a3);
      expect((await read(u, "2025-01-01", "2025-12-31")).sessions.a).toEqual({
        cwd: "/w/app",
        rows: [row("2025-02-01", "m/w", 5)],
        tools: [],
      });

      // A deleted session leaves every day; another user's days were never read.
      await stores.meta.deleteSession(u, "b", "2026-01-05T00:00:00.000Z");
      await stores.meta.deleteSession(u, "c", "2026-01-05T00:00:00.000Z");
      expect(await read(u, "2025-01-01", "2025-12-31")).toEqual({
        sessions: { a: { cwd: "/w/app", rows: [row("2025-02-01", "m/w", 5)], tools: [] } },
        uncounted: 0,
      });
      expect((await read(other, "2025-01-01", "2025-12-31")).sessions).toEqual({
        a: { cwd: "/w/app", rows: [row("2025-01-03", "m/z", 8)], tools: [] },
      });
      expect(await read(user(), "2025-01-01", "2025-12-31")).toEqual({ sessions: {}, uncounted: 0 });
    });

    it("a report of more days than a store reads at once gets them all, the same answer while nothing moved and a new one after a commit", {
      timeout: 120_000,
    }, async () => {
      const u = user();
      const start = Date.parse("2024-01-01");
      const days = Array.from({ length: 900 }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
      const heads = ["a", "b", "c"].map((id, n) =>
        withUsage(
          u,
          id,
          1,
          days.map((day) => row(day, "m/x", n + 1)),
        ),
      );
      for (const h of heads) await commitOver(undefined, h);
      const range = { from: days[0], to: days[days.length - 1] };
      const first = await stores.meta.listUsage(u, range);
      expect(first.sessions.map((s) => [s.sessionId, s.rows.length]).sort()).toEqual([
        ["a", 900],
        ["b", 900],
        ["c", 900],
      ]);
      // Asked again with nothing moved: the same answer (a store may settle its first read first).
      const second = await stores.meta.listUsage(u, range);
      expect(second).toEqual(first);
      expect(await stores.meta.listUsage(u, range)).toBe(second);
      const moved = withUsage(u, "a", 2, [row(days[0], "m/x", 9)]);
      await commitOver(heads[0], moved);
      const after = await stores.meta.listUsage(u, range);
      expect(after).not.toBe(second);
      expect(after.sessions.find((s) => s.sessionId === "a")?.rows).toEqual([row(days[0], "m/x", 9)]);
    });

    it("sessions of one user committing the same days at once all land, each as its last commit left it", async () => {
      const u = user();
      const days = ["2025-03-01", "2025-03-02", "2025-03-03"];
      await Promise.all(
        Array.from({ length: 6 }, async (_, n) => {
          let before: SessionHead | undefined;
          for (let revision = 1; revision <= 4; revision++) {
            const rows = days.slice(0, 1 + (revision % 3)).map((day, i) => row(day, `m/${n % 2}`, revision + i));
            const next = withUsage(u, `s${n}`, revision, rows, [[days[0], "bash", revision, 10]]);
            await commitOver(before, next);
            before = next;
          }
        }),
      );
      const want = sorted(await expected(u, "2025-01-01", "2025-12-31"));
      expect(Object.keys(want)).toHaveLength(6);
      expect((await read(u, "2025-01-01", "2025-12-31")).sessions).toEqual(want);
    });
  });
}
