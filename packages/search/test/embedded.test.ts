import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedLines } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
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
