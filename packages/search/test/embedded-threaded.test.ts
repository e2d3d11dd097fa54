import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedLines } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SqliteSearchIndex } from "../src/embedded.js";
import { ThreadedSearchIndex } from "../src/embedded-threaded.js";
import type { IndexBatch, LineSource } from "../src/index.js";
import { parseQuery, QueryError, SearchTimeout } from "../src/index.js";
import { describeSearchContract } from "./contract.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-search-threaded-"));
const stores = embeddedStores(join(dir, "store"));
const index = new ThreadedSearchIndex(join(dir, "search.db"), storedLines(stores));
// The search threads start (and load the code) before the first search's time limit counts.
beforeAll(() => index.warm(), 60_000);
afterAll(async () => {
  await index.close();
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

describeSearchContract("embedded, written by a worker thread", async () => ({ index, stores }));

const line = (o: object) => new TextEncoder().encode(`${JSON.stringify(o)}\n`);
const at = (sessionId: string) => ({ userId: "u-thread", sessionId, generation: 1, from: 0 });

describe("the embedded index's writer thread", () => {
  it("reads lines into documents on the writer thread, and searches see them at once", async () => {
    const bytes = line({
      type: "message",
      id: "m1",
      parentId: null,
      timestamp: "2026-02-01T10:00:00Z",
      message: { role: "user", content: "a kestrel over the bytes", timestamp: 1 },
    });
    expect(await index.applyLines([{ bytes, at: at("sess-lines") }])).toEqual([true]);
    const page = await index.search("u-thread", parseQuery("kestrel"), { limit: 5 });
    expect(page.sessions.map((s) => [s.sessionId, s.entries[0].entryId])).toEqual([["sess-lines", "m1"]]);
    expect(await index.state("u-thread", "sess-lines")).toEqual({ generation: 1, offset: bytes.length });
  });

  it("a call that fails on the writer thread rejects with its message, and the thread goes on", async () => {
    const broken = { ...at("sess-broken"), to: 1, documents: null, labels: {} } as unknown as IndexBatch;
    await expect(index.applyAll([broken])).rejects.toThrow(/documents|null|iterable/i);
    const fine: IndexBatch = {
      ...at("sess-fine"),
      to: 5,
      documents: [{ entryId: "f1", kind: "user", role: "user", text: "a merlin", time: 1 }],
      labels: {},
    };
    expect(await index.applyAll([fine])).toEqual([true]);
    expect(await index.state("u-thread", "sess-broken")).toBeUndefined();
  });

  it("closing waits for the writes asked for before it", async () => {
    const path = join(dir, "closing.db");
    const closing = new ThreadedSearchIndex(path, async () => []);
    const write = closing.applyAll([
      {
        ...at("sess-close"),
        to: 7,
        documents: [{ entryId: "c1", kind: "user", role: "user", text: "a hobby falcon", time: 1 }],
        labels: {},
      },
    ]);
    await closing.close();
    expect(await write).toEqual([true]);
    const reopened = new ThreadedSearchIndex(path, async () => []);
    expect(await reopened.state("u-thread", "sess-close")).toEqual({ generation: 1, offset: 7 });
    await reopened.close();
  });
});

describe("the embedded index's search threads", () => {
  const doc = (sessionId: string, text: string): IndexBatch => ({
    ...at(sessionId),
    to: 5,
    documents: [{ entryId: "d1", kind: "user", role: "user", text, time: 1, at: { offset: 0, length: 4 } }],
    labels: {},
  });

  it("runs searches off the caller's thread: the caller's connection never searches", async () => {
    const onCaller = vi.spyOn(SqliteSearchIndex.prototype, "search");
    try {
      await index.applyAll([doc("sess-off-thread", "a dunlin on the shore")]);
      const page = await index.search("u-thread", parseQuery("dunlin"), { limit: 5 });
      expect(page.sessions.map((s) => s.sessionId)).toEqual(["sess-off-thread"]);
      await expect(
        index.search("u-thread", parseQuery("dunlin"), { limit: 5, cursor: "forged" }),
      ).rejects.toBeInstanceOf(QueryError);
      expect(onCaller).not.toHaveBeenCalled();
    } finally {
      onCaller.mockRestore();
    }
  });

  it("answers SearchTimeout past the time limit, and the searches waiting run on a fresh thread", {
    timeout: 60_000,
  }, async () => {
    const path = join(dir, "limited.db");
    // Lines of one session never come: its search cannot finish.
    const lines: LineSource = (_user, sessionId, _generation, ranges) =>
      sessionId === "sess-stuck"
        ? new Promise(() => {})
        : Promise.resolve(ranges.map(() => new TextEncoder().encode("{}")));
    const limited = new ThreadedSearchIndex(path, lines, { threads: 1, timeLimitMs: 1500, queue: 2, perUser: 2 });
    try {
      await limited.applyAll([doc("sess-stuck", "a stuck sanderling"), doc("sess-free", "a free godwit")]);
      await limited.warm();
      const started = Date.now();
      const stuck = limited.search("u-thread", parseQuery("sanderling"), { limit: 5 });
      const waiting = limited.search("u-thread", parseQuery("godwit"), { limit: 5 });
      // Two of one user's searches at once: a third of the same user is refused at once, another user's waits.
      await expect(limited.search("u-thread", parseQuery("godwit"), { limit: 5 })).rejects.toThrow(
        /your earlier searches/,
      );
      const other = limited.search("u-other", parseQuery("godwit"), { limit: 5 });
      // The queue holds two: one more is refused at once.
      await expect(limited.search("u-third", parseQuery("godwit"), { limit: 5 })).rejects.toThrow(/too many searches/);
      const timedOut = await stuck.catch((error: Error) => error);
      expect(timedOut).toBeInstanceOf(SearchTimeout);
      expect((timedOut as Error).message).toMatch(/longer than 1500 ms/);
      expect(Date.now() - started).toBeLessThan(1500 + 1000);
      // The waiting searches run on the stopped thread's replacement, the user served least recently first.
      const order: string[] = [];
      const [mine, theirs] = await Promise.all([
        waiting.finally(() => order.push("u-thread")),
        other.finally(() => order.push("u-other")),
      ]);
      expect(mine.sessions.map((s) => s.sessionId)).toEqual(["sess-free"]);
      expect(theirs.sessions).toEqual([]);
      expect(order).toEqual(["u-other", "u-thread"]);
    } finally {
      await limited.close();
    }
  });
});
