/**
 * One bounded step of the search indexer (what a Lambda pass calls until its budget is spent):
 * what becomes of each session it is given, on the embedded store and index.
 */
import { batchOf, parseQuery } from "@pisync/search";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { sessionPrefix } from "@pisync/store";
import { openPair, type Pair } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Appender, SearchIndexer, storedLines } from "../src/index.js";

const USER = "stepper";
const enc = (text: string) => new TextEncoder().encode(text);
/** A session of `lines` user messages of `words` words each. */
const session = (id: string, lines: number, words: number) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n` +
  Array.from(
    { length: lines },
    (_, i) =>
      `${JSON.stringify({ type: "message", id: `m${i}`, parentId: i ? `m${i - 1}` : null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `${id} ${"puffin ".repeat(words)}`, timestamp: 1 } })}\n`,
  ).join("");

describe("SearchIndexer.step", () => {
  let pair: Pair;
  let index: SqliteSearchIndex;
  const at = (...ids: string[]) => ids.map((sessionId) => ({ userId: USER, sessionId }));

  beforeAll(async () => {
    pair = await openPair("embedded");
    index = new SqliteSearchIndex(":memory:", storedLines(pair.stores));
    const appender = new Appender(pair.stores);
    const store = (id: string, lines: number, words: number) =>
      appender.append({ userId: USER, sessionId: id, offset: 0, body: enc(session(id, lines, words)) });
    await store("small-a", 2, 5);
    await store("large", 20, 2000); // about 280 kB
    await store("small-b", 2, 5);
    await store("huge", 40, 20_000); // about 5.6 MB: more than one run of lines (4 MiB)
    await store("broken", 2, 5);
    await pair.stores.blobs.delete(await pair.stores.blobs.list(sessionPrefix(USER, "broken")));
  });
  afterAll(() => {
    index?.close();
    pair?.close();
  });

  it("takes sessions in order within its bytes (the first always), and says what became of each", async () => {
    const indexer = new SearchIndexer(pair.stores, index, { log: () => {} });
    const first = await indexer.step(at("small-a", "large", "small-b"), { maxBytes: 10_000 });
    // "large" does not fit: neither does anything after it (the order of the sessions is kept).
    expect(first.outcomes).toEqual(["current", "later", "later"]);
    expect(first.bytes).toBeGreaterThan(0);
    expect(first.bytes).toBeLessThan(10_000);
    const second = await indexer.step(at("large", "small-b", "small-a"), { maxBytes: 1 });
    expect(second.outcomes).toEqual(["current", "later", "later"]);
    expect(second.bytes).toBeGreaterThan(200_000);
    expect((await indexer.step(at("small-b", "small-a"), { maxBytes: 1 })).outcomes).toEqual(["current", "current"]);
    expect((await index.sessions(USER)).map((s) => s.sessionId).sort()).toEqual(["large", "small-a", "small-b"]);
  });

  it("indexes in the order given, whatever its bytes: a broad query ranks the same newest matches as after a rebuild", async () => {
    // A user of its own: small sessions and one large one, which a step of few bytes cannot take with the others.
    const user = "in-order";
    const appender = new Appender(pair.stores);
    for (const [id, words] of [
      ["first", 5],
      ["large", 2000],
      ["second", 5],
      ["third", 5],
    ] as const) {
      await appender.append({ userId: user, sessionId: id, offset: 0, body: enc(session(id, 20, words)) });
    }
    const order = (await pair.stores.meta.listHeads(user, { limit: 100 })).heads.map((head) => head.sessionId);
    expect(order.at(-1)).not.toBe("large"); // else both orders would agree whatever the step does
    // Few ranked entries: the query's newest matches (by the order they were indexed) decide its answer.
    const bounds = { rankedEntries: 3, prefixWords: 16 };
    const rebuilt = new SqliteSearchIndex(":memory:", storedLines(pair.stores), bounds);
    const stepped = new SqliteSearchIndex(":memory:", storedLines(pair.stores), bounds);
    try {
      await new SearchIndexer(pair.stores, rebuilt, { log: () => {} }).rebuild([user]);
      // As a Lambda pass does: steps of few bytes; the sessions not taken come next, in order.
      const indexer = new SearchIndexer(pair.stores, stepped, { log: () => {} });
      const queue = order.map((sessionId) => ({ userId: user, sessionId }));
      while (queue.length > 0) {
        const step = queue.splice(0, queue.length);
        const { outcomes } = await indexer.step(step, { maxBytes: 50_000 });
        queue.unshift(...step.filter((_, i) => outcomes[i] === "later"));
      }
      const query = parseQuery("puffin");
      const rebuiltPage = await rebuilt.search(user, query, { limit: 20 });
      expect(rebuiltPage.sessions.map((s) => s.sessionId)).toEqual([order.at(-1)]);
      expect(await stepped.search(user, query, { limit: 20 })).toEqual(rebuiltPage);
    } finally {
      rebuilt.close();
      stepped.close();
    }
  });

  it("indexes a session larger than a run of lines over several steps", async () => {
    const indexer = new SearchIndexer(pair.stores, index, { log: () => {} });
    expect((await indexer.step(at("huge"))).outcomes).toEqual(["more"]);
    expect((await indexer.step(at("huge"))).outcomes).toEqual(["current"]);
    const head = await pair.stores.meta.getHead(USER, "huge");
    expect((await index.state(USER, "huge"))?.offset).toBe(head?.current.length);
  });

  it("removes a session the store no longer has; a session that cannot be read fails, then waits", async () => {
    const indexer = new SearchIndexer(pair.stores, index, { log: () => {} });
    // Indexed, but not (any more) in the store.
    await index.apply(batchOf(enc(session("gone", 1, 1)), { userId: USER, sessionId: "gone", generation: 1, from: 0 }));
    expect(await index.state(USER, "gone")).toBeDefined();
    const step = await indexer.step(at("gone", "broken", "small-b"));
    expect(step.outcomes).toEqual(["current", "failed", "current"]);
    expect(await index.state(USER, "gone")).toBeUndefined();
    expect(indexer.failures().map((f) => f.sessionId)).toEqual(["broken"]);
    expect((await indexer.step(at("broken"))).outcomes).toEqual(["failed"]);
    expect(indexer.failures()[0]?.attempts).toBe(1); // waiting for its retry: not tried again
  });
});
