/**
 * A search past its time limit stops working, not only answering: the review's reproduction (a
 * long `file:` glob over many paths, searched back to back) on a smaller library with a lower
 * limit, measuring the process's CPU after the answer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadWasmSqlite, WasmSqlite } from "../src/aws/wasm-sqlite.js";
import { DEFAULT_BOUNDS, SqliteSearchIndex } from "../src/embedded.js";
import { ThreadedSearchIndex } from "../src/embedded-threaded.js";
import type { IndexBatch, LineSource, SearchDocument } from "../src/index.js";
import { parseQuery, QueryError, SearchTimeout } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-search-deadline-"));
const lines: LineSource = async (_user, _session, _generation, ranges) =>
  ranges.map(() => new TextEncoder().encode("{}"));

/** A session of `entries` entries, each naming `paths` long paths full of `a`s (what the glob crawls). */
function costly(sessionId: string, entries: number, paths: number): IndexBatch {
  const documents: SearchDocument[] = [];
  for (let i = 0; i < entries; i++) {
    const files = Array.from({ length: paths }, (_, j) => `src/${"a".repeat(300)}/${i}/${j}.ts`);
    documents.push({ entryId: `e${i}`, kind: "tool_call", role: "tool", text: `edit file ${i}`, time: i, files });
  }
  return { userId: "u-costly", sessionId, generation: 1, from: 0, to: 10, documents, labels: {} };
}

/** A pattern that walks every character of every path, again from each place its `*` lets it. */
const GLOB = `file:*${"a".repeat(400)}b`;

/** CPU seconds the whole process (every thread) uses over `ms`. */
async function cpuOver(ms: number): Promise<number> {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

const path = join(dir, "search.db");
beforeAll(async () => {
  const writer = new SqliteSearchIndex(path, lines);
  await writer.applyAll([costly("s-1", 2000, 20), costly("s-2", 2000, 20)]);
  await writer.apply({
    userId: "u-calm",
    sessionId: "s-calm",
    generation: 1,
    from: 0,
    to: 10,
    documents: [
      { entryId: "c1", kind: "user", role: "user", text: "a quiet plover", time: 1, at: { offset: 0, length: 2 } },
    ],
    labels: {},
  });
  writer.close();
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a search past its time limit", () => {
  it("stops consuming CPU within a second of its 503, and its thread takes the next search", {
    timeout: 90_000,
  }, async () => {
    // No charge for the pattern here: the limit alone must stop it.
    const index = new ThreadedSearchIndex(
      path,
      lines,
      { threads: 1, timeLimitMs: 300, queue: 4, perUser: 4, graceMs: 5000 },
      { ...DEFAULT_BOUNDS, fileWork: Number.POSITIVE_INFINITY },
    );
    try {
      await index.warm();
      const answer = await index.search("u-costly", parseQuery(GLOB), { limit: 5 }).catch((error: Error) => error);
      expect(answer).toBeInstanceOf(SearchTimeout);
      // Unstopped, the statement would run for many seconds on a core (the grace period is 5 s):
      // from a second after the answer, the process is all but idle.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await cpuOver(2000)).toBeLessThan(0.6);
      // The thread stopped its statement itself: it was not replaced, and it answers the next search.
      expect(index.searchThreadsAlive).toBe(1);
      const calm = await index.search("u-calm", parseQuery("plover"), { limit: 5 });
      expect(calm.sessions.map((s) => s.sessionId)).toEqual(["s-calm"]);
    } finally {
      await index.close();
    }
  });

  it("keeps threads alive within the pool counting stopped ones, and another user's search answers meanwhile", {
    timeout: 90_000,
  }, async () => {
    const index = new ThreadedSearchIndex(
      path,
      lines,
      { threads: 2, timeLimitMs: 6000, queue: 8, perUser: 4, runningPerUser: 1, graceMs: 1000 },
      { ...DEFAULT_BOUNDS, fileWork: Number.POSITIVE_INFINITY },
    );
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, index.searchThreadsAlive);
    }, 10);
    try {
      await index.warm();
      // One user sends costly searches back to back, two at a time (each runs its whole 6 s).
      let stop = false;
      let costlyAnswered = 0;
      const hostile = async () => {
        while (!stop) {
          await index.search("u-costly", parseQuery(GLOB), { limit: 5 }).catch(() => undefined);
          costlyAnswered++;
        }
      };
      const loops = [hostile(), hostile()];
      await new Promise((resolve) => setTimeout(resolve, 500));
      const before = costlyAnswered;
      const calm = await index.search("u-calm", parseQuery("plover"), { limit: 5 });
      // One user's searches hold one thread at most: the other's ran at once, before any costly
      // search in progress ended (rather than after one, as it would waiting for a thread).
      const meanwhile = costlyAnswered - before;
      stop = true;
      await Promise.all(loops);
      expect(calm.sessions.map((s) => s.sessionId)).toEqual(["s-calm"]);
      expect(meanwhile).toBe(0);
      expect(most).toBeLessThanOrEqual(2);
    } finally {
      clearInterval(watch);
      await index.close();
    }
  });

  it("a thread that does not stop within its grace period is stopped, and counted until it has exited", {
    timeout: 60_000,
  }, async () => {
    // Lines of this session never come: its search waits forever, past any deadline.
    const stuck: LineSource = () => new Promise(() => {});
    const index = new ThreadedSearchIndex(path, stuck, {
      threads: 1,
      timeLimitMs: 200,
      queue: 4,
      perUser: 4,
      graceMs: 200,
    });
    try {
      await index.warm();
      await expect(index.search("u-calm", parseQuery("plover"), { limit: 5 })).rejects.toBeInstanceOf(SearchTimeout);
      let most = 0;
      for (let i = 0; i < 100; i++) {
        most = Math.max(most, index.searchThreadsAlive);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(most).toBe(1);
    } finally {
      await index.close();
    }
  });
});

describe("a file: pattern's charge", () => {
  it("refuses a pattern too costly for the user's paths before it runs, with a bad query", async () => {
    const index = new SqliteSearchIndex(path, lines, { ...DEFAULT_BOUNDS, fileWork: 1_000_000 });
    try {
      const refused = await index.search("u-costly", parseQuery(GLOB), { limit: 5 }).catch((e: Error) => e);
      expect(refused).toBeInstanceOf(QueryError);
      expect((refused as Error).message).toMatch(/too costly .* 80000 paths/);
      // A short path is cheap, and another user with few paths pays for theirs only.
      await expect(index.search("u-costly", parseQuery("file:0.ts"), { limit: 5 })).resolves.toBeDefined();
      await expect(index.search("u-calm", parseQuery(GLOB), { limit: 5 })).resolves.toEqual({ sessions: [] });
    } finally {
      index.close();
    }
  });
});

describe("on the WebAssembly SQLite (the AWS adapter's index files)", () => {
  it("a search stops at its deadline, with SearchTimeout", { timeout: 90_000 }, async () => {
    await loadWasmSqlite();
    const index = new SqliteSearchIndex(new WasmSqlite(":memory:"), lines, {
      ...DEFAULT_BOUNDS,
      fileWork: Number.POSITIVE_INFINITY,
    });
    try {
      await index.applyAll([{ ...costly("s-1", 1000, 20), userId: "u-costly" }]);
      const answer = await index
        .search("u-costly", parseQuery(GLOB), { limit: 5, deadline: Date.now() + 200 })
        .catch((error: Error) => error);
      // Unstopped, the glob runs to its end and answers a page (an empty one).
      expect(answer).toBeInstanceOf(SearchTimeout);
      // The same connection answers the next search.
      await expect(index.search("u-costly", parseQuery("file:0.ts"), { limit: 5 })).resolves.toBeDefined();
    } finally {
      index.close();
    }
  });
});
