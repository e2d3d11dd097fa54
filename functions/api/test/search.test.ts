import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Appender, SearchIndexer, storedLines } from "@pisync/core";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { ThreadedSearchIndex } from "@pisync/search/embedded-threaded";
import { embeddedStores } from "@pisync/store/embedded";
import { assistantMessage, entry, openPair, type Pair } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp, startNodeServer } from "../src/index.js";
import { client, userToken } from "./harness.js";

const header = (id: string) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-02-01T10:00:00.000Z", cwd: "/home/me/app" })}\n`;
const user = (id: string, text: string) =>
  `${JSON.stringify({ type: "message", id, parentId: null, timestamp: "2026-02-01T10:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } })}\n`;

/** Asks until `done` holds of the answer (indexing is in the background: at most 10 s). */
async function eventually<T>(ask: () => Promise<T>, done: (answer: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const answer = await ask();
    if (done(answer) || Date.now() > until) return answer;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("GET /v1/search", () => {
  let pair: Pair;
  let dir: string;
  let index: SqliteSearchIndex;
  let app: ReturnType<typeof createApp>;
  let mine: ReturnType<typeof client>;
  let theirs: ReturnType<typeof client>;

  beforeAll(async () => {
    pair = await openPair("embedded");
    dir = mkdtempSync(join(tmpdir(), "pisync-search-api-"));
    index = new SqliteSearchIndex(join(dir, "search.db"), storedLines(pair.stores));
    app = createApp({
      stores: pair.stores,
      log: () => {},
      search: { index, indexer: new SearchIndexer(pair.stores, index) },
    });
    mine = client(app, await userToken(pair.stores, "alice"));
    theirs = client(app, await userToken(pair.stores, "bob"));
  });
  afterAll(() => {
    index.close();
    pair.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (c: ReturnType<typeof client>, query: string) => app.request(`/v1/search?${query}`, { headers: c.auth });

  it("finds what an append just stored, and forgets a deleted session", async () => {
    const body = header("s1") + user("aa11", "the S3 retry bug is fixed");
    expect((await mine.patch("s1", 0, body)).status).toBeLessThan(300);
    const page = await eventually(
      async () => {
        const response = await get(mine, `q=${encodeURIComponent('"retry bug"')}`);
        expect(response.status).toBe(200);
        return response.json();
      },
      (answer) => answer.sessions.length > 0,
    );
    expect(page.sessions).toHaveLength(1);
    expect(page.sessions[0]).toMatchObject({ sessionId: "s1", cwd: "/home/me/app" });
    expect(page.sessions[0].entries[0]).toMatchObject({ entryId: "aa11", kind: "user" });
    const more = user("bb22", "a second line about pelicans").replace('"parentId":null', '"parentId":"aa11"');
    expect((await mine.patch("s1", Buffer.byteLength(body), more)).status).toBeLessThan(300);
    const pelicans = async () => (await (await get(mine, "q=pelicans")).json()).sessions as unknown[];
    expect(await eventually(pelicans, (found) => found.length > 0)).toHaveLength(1);
    expect((await app.request("/v1/sessions/s1", { method: "DELETE", headers: mine.auth })).status).toBeLessThan(300);
    expect(await eventually(pelicans, (found) => found.length === 0)).toEqual([]);
  });

  it("never answers another user's sessions", async () => {
    await mine.patch("s2", 0, header("s2") + user("cc33", "alice's flamingo"));
    const flamingos = async () => (await (await get(mine, "q=flamingo")).json()).sessions as unknown[];
    expect(await eventually(flamingos, (found) => found.length > 0)).toHaveLength(1); // indexed for her
    const page = await (await get(theirs, "q=flamingo")).json();
    expect(page).toEqual({ sessions: [] });
  });

  it("answers a bad query with 400, a message and a code", async () => {
    for (const [query, message] of [
      ["q=%22open", /unclosed quote/],
      ["q=role:robot", /role: is user, assistant or tool/],
      ["", /q is missing/],
      ["q=x&limit=0", /limit must be a whole number from 1 to 100/],
      ["q=x&limit=abc", /limit must be/],
      ["q=x&cursor=forged", /cursor/],
      // The costly shapes: a phrase of many words, a prefix with a one-letter word.
      [`q=${encodeURIComponent(`"${Array(249).fill("the").join(" ")}"`)}`, /249 words: at most 32/],
      [`q=${encodeURIComponent("x-a*")}`, /every word of a prefix needs at least 2 letters/],
    ] as const) {
      const response = await get(mine, query);
      expect(response.status, query).toBe(400);
      const body = await response.json();
      expect(body.code).toBe("bad_query");
      expect(body.error).toMatch(message);
    }
  });

  it("answers a bad query through the one error boundary, as every route's 400: never kept by a cache", async () => {
    for (const query of ["q=%22open", "", "q=x&limit=0"]) {
      const response = await get(mine, query);
      expect(response.status, query).toBe(400);
      expect(response.headers.get("cache-control"), query).toBe("no-store");
    }
  });

  it("answers a write before its indexing, which a background drain does", async () => {
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    /** The real index, whose batch writes wait for the gate. */
    class GatedIndex extends SqliteSearchIndex {
      override async applyAll(batches: Parameters<SqliteSearchIndex["applyAll"]>[0]) {
        await gate;
        return super.applyAll(batches);
      }
    }
    const gated = new GatedIndex(join(dir, "gated.db"), storedLines(pair.stores));
    const indexer = new SearchIndexer(pair.stores, gated, { drainDelayMs: 0 });
    const gatedApp = createApp({ stores: pair.stores, log: () => {}, search: { index: gated, indexer } });
    const carol = client(gatedApp, await userToken(pair.stores, "carol"));
    try {
      expect((await carol.patch("s3", 0, header("s3") + user("ee55", "a gated gannet"))).status).toBeLessThan(300);
      expect(await gated.state("carol", "s3")).toBeUndefined(); // answered, not indexed yet
      open();
      await indexer.flush();
      const found = await gatedApp.request("/v1/search?q=gannet", { headers: carol.auth });
      expect((await found.json()).sessions).toMatchObject([{ sessionId: "s3", entries: [{ entryId: "ee55" }] }]);
    } finally {
      open();
      await indexer.flush();
      gated.close();
    }
  });

  it("answers 503 search_timeout with Retry-After when a search passes its time limit", {
    timeout: 60_000,
  }, async () => {
    // Lines of this user's sessions never come: the search cannot finish within its limit.
    const stuck = new ThreadedSearchIndex(join(dir, "stuck.db"), () => new Promise(() => {}), {
      threads: 1,
      timeLimitMs: 500,
      queue: 4,
      perUser: 4,
    });
    const indexer = new SearchIndexer(pair.stores, stuck, { drainDelayMs: 0 });
    const stuckApp = createApp({ stores: pair.stores, log: () => {}, search: { index: stuck, indexer } });
    const dave = client(stuckApp, await userToken(pair.stores, "dave"));
    try {
      expect((await dave.patch("s4", 0, header("s4") + user("ff66", "a slow sandpiper"))).status).toBeLessThan(300);
      await indexer.flush();
      await stuck.warm();
      const response = await stuckApp.request("/v1/search?q=sandpiper", { headers: dave.auth });
      expect(response.status).toBe(503);
      expect(response.headers.get("Retry-After")).toBe("1");
      expect(await response.json()).toMatchObject({ code: "search_timeout", error: expect.stringMatching(/500 ms/) });
    } finally {
      await stuck.close();
    }
  });

  it("needs a token", async () => {
    expect((await app.request("/v1/search?q=x")).status).toBe(401);
  });
});

describe("search on the one-machine server", () => {
  it("a poisoned session leaves every other user's appends searchable within 10 s, and the log quiet", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pisync-search-node-"));
    const log: string[] = [];
    try {
      const stores = embeddedStores(dataDir);
      const tokens = {
        mallory: await userToken(stores, "mallory"),
        alice: await userToken(stores, "alice"),
        bob: await userToken(stores, "bob"),
      };
      stores.close();
      const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, log: (line) => log.push(line) });
      const patch = (token: string, id: string, body: string) =>
        fetch(`${server.url}/v1/sessions/${id}`, {
          method: "PATCH",
          headers: { Authorization: `Bearer ${token}`, "Upload-Offset": "0" },
          body,
        });
      const found = async (token: string, q: string) => {
        const r = await fetch(`${server.url}/v1/search?q=${q}`, { headers: { Authorization: `Bearer ${token}` } });
        return ((await r.json()) as { sessions: Array<{ sessionId: string }> }).sessions.map((s) => s.sessionId);
      };
      try {
        // A tool call whose arguments nest 5,000 deep (about 10 KB).
        const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
        const poison = JSON.stringify(
          entry(
            "p0000001",
            null,
            1,
            assistantMessage([{ type: "toolCall", id: "t1", name: "bash", arguments: { nested: "DEEP" } }]),
          ),
        ).replace('"DEEP"', deep);
        expect(await found(tokens.alice, "ibex")).toEqual([]); // the server is up and its search threads too
        const started = Date.now();
        expect(
          (await patch(tokens.mallory, "poison", `${header("poison")}${poison}\n${user("m1", "mallory's marmot")}`)).ok,
        ).toBe(true);
        for (let i = 0; i < 4; i++) {
          expect((await patch(tokens.alice, `a${i}`, header(`a${i}`) + user("a1", `alice's ibex ${i}`))).ok).toBe(true);
          expect((await patch(tokens.bob, `b${i}`, header(`b${i}`) + user("b1", `bob's yak ${i}`))).ok).toBe(true);
        }
        const ibex = await eventually(
          () => found(tokens.alice, "ibex"),
          (ids) => ids.length === 4,
        );
        const yak = await eventually(
          () => found(tokens.bob, "yak"),
          (ids) => ids.length === 4,
        );
        expect(Date.now() - started).toBeLessThan(10_000);
        expect([ibex.length, yak.length]).toEqual([4, 4]);
        // The poisoned session itself: the deep line is kept and searchable as text, the rest as usual.
        expect(
          await eventually(
            () => found(tokens.mallory, "marmot"),
            (ids) => ids.length > 0,
          ),
        ).toEqual(["poison"]);
        expect(await found(tokens.mallory, "nested")).toEqual(["poison"]);
        // Two catch-up passes later, nothing was logged about it.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 11_000 - Date.now())));
        expect(log.filter((line) => line.startsWith("pisync: "))).toEqual([]); // failures are "pisync: …"
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it("indexes on start what was stored without being indexed (a crash between append and index)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pisync-search-node-"));
    try {
      const stores = embeddedStores(dataDir);
      const body = new TextEncoder().encode(header("s9") + user("dd44", "stored before the crash: wombat"));
      await new Appender(stores).append({ userId: "local", sessionId: "s9", offset: 0, body });
      stores.close();
      const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, log: () => {} });
      try {
        let sessions: unknown[] = [];
        for (let tries = 0; tries < 100 && sessions.length === 0; tries++) {
          if (tries) await new Promise((r) => setTimeout(r, 100));
          const r = await fetch(`${server.url}/v1/search?q=wombat`, {
            headers: { Authorization: `Bearer ${server.token}` },
          });
          sessions = ((await r.json()) as { sessions: unknown[] }).sessions;
        }
        expect(sessions).toMatchObject([{ sessionId: "s9", entries: [{ entryId: "dd44" }] }]);
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("searches off the server's event loop: no search runs on its thread", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pisync-search-node-"));
    const onLoop = vi.spyOn(SqliteSearchIndex.prototype, "search");
    try {
      const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, log: () => {} });
      try {
        const auth = { Authorization: `Bearer ${server.token}` };
        const put = await fetch(`${server.url}/v1/sessions/s11`, {
          method: "PATCH",
          headers: { ...auth, "Upload-Offset": "0" },
          body: header("s11") + user("ee55", "a threaded dipper"),
        });
        expect(put.ok).toBe(true);
        const found = await eventually(
          async () => {
            const r = await fetch(`${server.url}/v1/search?q=dipper`, { headers: auth });
            expect(r.status).toBe(200);
            return ((await r.json()) as { sessions: Array<{ sessionId: string }> }).sessions;
          },
          (sessions) => sessions.length > 0,
          45_000, // what is asserted is where searches run, not how soon indexing follows
        );
        expect(found.map((s) => s.sessionId)).toEqual(["s11"]);
        expect(onLoop).not.toHaveBeenCalled();
      } finally {
        await server.close();
      }
    } finally {
      onLoop.mockRestore();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it("catches up every user of the store, not only the local one (a new user's first session)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pisync-search-node-"));
    try {
      const stores = embeddedStores(dataDir);
      const body = new TextEncoder().encode(header("s10") + user("ff66", "a newcomer's first okapi"));
      await new Appender(stores).append({ userId: "newcomer", sessionId: "s10", offset: 0, body });
      const token = await userToken(stores, "newcomer");
      stores.close();
      const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, log: () => {} });
      try {
        const sessions = await eventually(
          async () => {
            const r = await fetch(`${server.url}/v1/search?q=okapi`, { headers: { Authorization: `Bearer ${token}` } });
            return ((await r.json()) as { sessions: unknown[] }).sessions;
          },
          (found) => found.length > 0,
        );
        expect(sessions).toMatchObject([{ sessionId: "s10", entries: [{ entryId: "ff66" }] }]);
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
