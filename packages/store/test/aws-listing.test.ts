/**
 * The library's list on DynamoDB Local reads a bounded number of items per page, however many
 * sessions the user has and whatever the filter: counted from DynamoDB's own `ScannedCount`.
 * A folder or model filter reads its own index: the page and one more, however rare its matches.
 */
import { testAwsConfig } from "@pisync/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { DynamoMetaStore } from "../src/aws/index.js";
import { type CardFilter, LIST_SCAN_BUDGET, type SessionHead } from "../src/index.js";
import { head } from "./contract.js";

const SESSIONS = 1200;
const USER = "heavy";

describe("the library's list on DynamoDB Local: bounded reads per page", () => {
  let meta: DynamoMetaStore;
  beforeAll(async () => {
    const config = await testAwsConfig();
    meta = new DynamoMetaStore(config, config.table);
    const heads: SessionHead[] = Array.from({ length: SESSIONS }, (_, i) => {
      const h = head(USER, `s${String(i).padStart(5, "0")}`, 1, "2026-06-01T00:00:00.000Z");
      const day = new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString();
      // One session in a hundred is in the rare folder; one in three used the other model.
      const cwd = i % 100 === 7 ? "/w/rare" : "/w/common";
      return { ...h, summary: { ...h.summary, cwd, models: [i % 3 ? "p/a" : "p/b"], lastEntryAt: day } };
    });
    // A few at a time: each commit is a transaction of several items, and the machine is shared.
    for (let i = 0; i < heads.length; i += 8) {
      await Promise.all(heads.slice(i, i + 8).map((h) => meta.commit({ head: h, expectedRevision: null })));
    }
  }, 300_000);

  /** Reads one page, returning it with the items DynamoDB read for it. */
  async function counted(filter: CardFilter | undefined, limit: number, cursor?: string) {
    const before = meta.listReads.items;
    const page = await meta.listCardPage(USER, { limit, cursor, filter });
    return { page, read: meta.listReads.items - before };
  }

  it("the first page reads the page and one more, not the user's 1,200 sessions", async () => {
    const { page, read } = await counted(undefined, 50);
    expect(page.cards).toHaveLength(50);
    expect(page.cards[0].sessionId).toBe(`s${String(SESSIONS - 1).padStart(5, "0")}`);
    expect(read).toBeLessThanOrEqual(51);
    const next = await counted(undefined, 50, page.cursor);
    expect(next.page.cards[0].sessionId).toBe(`s${String(SESSIONS - 51).padStart(5, "0")}`);
    expect(next.read).toBeLessThanOrEqual(51);
  });

  it("a date range is read from the index's keys: only its own items", async () => {
    // 2025-01-10 holds 24 sessions (one an hour).
    const { page, read } = await counted({ from: "2025-01-10", to: "2025-01-10" }, 50);
    expect(page.cards).toHaveLength(24);
    expect(page.cursor).toBeUndefined();
    expect(read).toBeLessThanOrEqual(25);
  });

  it("a rare folder is one page read from its own index: its 12 sessions, 12 items read", async () => {
    const { page, read } = await counted({ cwd: "/w/rare" }, 50);
    expect(page.cards.map((c) => c.sessionId)).toEqual(
      Array.from({ length: SESSIONS / 100 }, (_, i) => `s${String(SESSIONS - 93 - 100 * i).padStart(5, "0")}`),
    );
    expect(page.cursor).toBeUndefined();
    expect(read).toBeLessThanOrEqual(SESSIONS / 100);
  });

  it("a folder's pages and a model's read the page and one more, each page full", async () => {
    for (const filter of [{ cwd: "/w" }, { cwd: "/w/common" }, { model: "b" }, { model: "p/b" }]) {
      let cursor: string | undefined;
      for (let n = 0; n < 3; n++) {
        const { page, read } = await counted(filter, 50, cursor);
        expect(page.cards, JSON.stringify(filter)).toHaveLength(50);
        expect(read, JSON.stringify(filter)).toBeLessThanOrEqual(51);
        cursor = page.cursor;
      }
    }
  });

  it("a folder with a date range reads only that range of the folder's index", async () => {
    // 2025-01-10 holds 24 sessions (one an hour), all but none of the rare folder's: 24 of /w.
    const { page, read } = await counted({ cwd: "/w", from: "2025-01-10", to: "2025-01-10" }, 50);
    expect(page.cards).toHaveLength(24);
    expect(read).toBeLessThanOrEqual(25);
  });

  it("a filter nothing matches answers an empty last page, reading nothing", async () => {
    const { page, read } = await counted({ cwd: "/nowhere" }, 50);
    expect(page).toEqual({ cards: [] });
    expect(read).toBe(0);
  });

  it("two filters read one's index and check the other within the scan budget", async () => {
    const found: string[] = [];
    let cursor: string | undefined;
    do {
      const { page, read } = await counted({ cwd: "/w/common", model: "p/b" }, 50, cursor);
      expect(read).toBeLessThanOrEqual(LIST_SCAN_BUDGET + 1);
      found.push(...page.cards.map((c) => c.sessionId));
      cursor = page.cursor;
    } while (cursor);
    expect(found).toHaveLength(
      Array.from({ length: SESSIONS }, (_, i) => i).filter((i) => i % 100 !== 7 && i % 3 === 0).length,
    );
  });
});

describe("a commit past DynamoDB's 100 items a transaction", () => {
  it("commits a body of many pages with a card of many models, and lists it under every one", async () => {
    const config = await testAwsConfig();
    const meta = new DynamoMetaStore(config, config.table);
    const h = head("many", "wide", 1, "2026-06-02T00:00:00.000Z");
    // 20 three-part model names (3 filter entries each) in a deep folder (8 more): 68 filter
    // entries, beside 40 pages, the head and its list entry: 110 items.
    const models = Array.from({ length: 20 }, (_, i) => `gw/p${i}/m${i}`);
    const cwd = "/a/b/c/d/e/f/g/h";
    const wide: SessionHead = { ...h, summary: { ...h.summary, cwd, models, lastEntryAt: h.updatedAt } };
    const pages = Array.from({ length: 40 }, (_, i) => ({
      generation: 1,
      start: i * 10,
      end: i * 10 + 10,
      records: [],
      problems: [],
    }));
    await meta.commit({ head: wide, expectedRevision: null, pages });
    expect((await meta.getHead("many", "wide"))?.revision).toBe(1);
    for (const filter of [...models.map((model) => ({ model })), { model: "m19" }, { cwd: "/a/b" }, { cwd }]) {
      const page = await meta.listCardPage("many", { limit: 10, filter });
      expect(
        page.cards.map((c) => c.sessionId),
        JSON.stringify(filter),
      ).toEqual(["wide"]);
    }
  });
});
