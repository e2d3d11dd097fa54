import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedLines } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { openSqlite } from "@pisync/store/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteSearchIndex } from "../src/embedded.js";
import { parseQuery } from "../src/index.js";
import { describeSearchContract } from "./contract.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-search-"));
const stores = embeddedStores(join(dir, "store"));
const index = new SqliteSearchIndex(join(dir, "search.db"), storedLines(stores));
afterAll(() => {
  index.close();
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

describeSearchContract("embedded (SQLite FTS5)", async () => ({ index, stores }));

describe("embedded: a broad query", () => {
  it("ranks a term found in more entries than it ranks among the newest, and narrower terms among all", async () => {
    const docs = (prefix: string, count: number, text: (i: number) => string, t0 = 0) =>
      Array.from({ length: count }, (_, i) => ({
        entryId: `${prefix}${i}`,
        kind: "user" as const,
        role: "user" as const,
        text: text(i),
        time: t0 + i,
      }));
    const batch = (sessionId: string, documents: ReturnType<typeof docs>) => ({
      userId: "u-broad",
      sessionId,
      generation: 1,
      from: 0,
      to: 1,
      documents,
      labels: {},
    });
    // More entries with the word than a query ranks, then a newer session with it once.
    await index.applyAll([
      batch(
        "sess-old",
        docs("o", 10_050, (i) => (i === 7 ? "plover plover plover grebe" : "plover")),
      ),
    ]);
    await index.applyAll([
      batch(
        "sess-new",
        docs("n", 1, () => "plover", 20_000),
      ),
    ]);
    const broad = await index.search("u-broad", parseQuery("plover"), { limit: 10 });
    expect(broad.sessions.map((s) => s.sessionId).sort()).toEqual(["sess-new", "sess-old"]);
    // Entry o7 is older than the ranked window: the broad word alone does not rank it, a narrower query does.
    expect(broad.sessions.flatMap((s) => s.entries.map((e) => e.entryId))).not.toContain("o7");
    const narrow = await index.search("u-broad", parseQuery("plover grebe"), { limit: 10 });
    expect(narrow.sessions.flatMap((s) => s.entries.map((e) => e.entryId))).toEqual(["o7"]);
  });
});

describe("embedded: a prefix", () => {
  // One session per entry: a page shows a few entries of each session.
  const sessions = (entries: Array<[string, string]>) =>
    entries.map(([id, text], i) => ({
      userId: "u-prefix",
      sessionId: id,
      generation: 1,
      from: 0,
      to: 1,
      documents: [{ entryId: id, kind: "user" as const, role: "user" as const, text, time: i }],
      labels: {},
    }));
  const entriesOf = (page: Awaited<ReturnType<SqliteSearchIndex["search"]>>) =>
    page.sessions.flatMap((s) => s.entries.map((e) => e.entryId)).sort();

  it("matches its most common completions, up to the bound; an excluded prefix excludes the same ones", async () => {
    const bounded = new SqliteSearchIndex(":memory:", async () => [], { rankedEntries: 10_000, prefixWords: 2 });
    await bounded.applyAll(
      sessions([
        ["a", "stormy sea"],
        ["b", "stormy night"],
        ["c", "stormy weather"],
        ["d", "storm front"],
        ["e", "storm warning"],
        ["f", "a stork flies"],
        ["g", "calm sea"],
        ["h", "storage at sea"],
      ]),
    );
    // The two most common words starting with "stor" are "stormy" (3 entries) and "storm" (2).
    expect(entriesOf(await bounded.search("u-prefix", parseQuery("stor*"), { limit: 10 }))).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
    // Folded as the index folds words (case, diacritics); a prefix with few completions finds them all.
    expect(entriesOf(await bounded.search("u-prefix", parseQuery("STÖRK*"), { limit: 10 }))).toEqual(["f"]);
    // Excluded, a prefix costs what it does looked for: its two most common completions, not "storage" (the third).
    expect(entriesOf(await bounded.search("u-prefix", parseQuery("sea -stor*"), { limit: 10 }))).toEqual(["g", "h"]);
    expect(entriesOf(await bounded.search("u-prefix", parseQuery("zebr*"), { limit: 10 }))).toEqual([]);
    bounded.close();
    const unbounded = new SqliteSearchIndex(":memory:", async () => [], {
      rankedEntries: 10_000,
      prefixWords: Number.POSITIVE_INFINITY,
    });
    await unbounded.applyAll(
      sessions([
        ["f", "a stork flies"],
        ["d", "storm front"],
      ]),
    );
    expect(entriesOf(await unbounded.search("u-prefix", parseQuery("stor*"), { limit: 10 }))).toEqual(["d", "f"]);
    unbounded.close();
  });
});

describe("embedded: the index's layout", () => {
  it("an index of an older layout (no paths) is dropped on open, to be rebuilt from the bytes", async () => {
    const path = join(dir, "old-layout.db");
    const none = async () => [];
    const doc = { entryId: "e1", kind: "tool_call" as const, role: "tool" as const, text: "read a.ts", time: 1 };
    const batch = { userId: "u", sessionId: "s", generation: 1, from: 0, to: 10, labels: {} };
    const first = new SqliteSearchIndex(path, none);
    await first.apply({ ...batch, documents: [{ ...doc, files: ["a.ts"] }] });
    first.close();
    const again = new SqliteSearchIndex(path, none); // the same layout: kept
    expect(await again.files("u", "s", 10)).toEqual([{ path: "a.ts", entryId: "e1" }]);
    again.close();
    const raw = openSqlite(path);
    raw.pragma("user_version = 2");
    raw.close();
    const upgraded = new SqliteSearchIndex(path, none);
    expect(await upgraded.sessions("u")).toEqual([]);
    expect(await upgraded.apply({ ...batch, documents: [{ ...doc, files: ["b.ts"] }] })).toBe(true);
    expect(await upgraded.files("u", "s", 10)).toEqual([{ path: "b.ts", entryId: "e1" }]);
    upgraded.close();
  });
});
