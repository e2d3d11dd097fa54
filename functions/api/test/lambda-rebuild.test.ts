/**
 * Rebuilds and upgrades of the AWS search index on the Lambda entry, against DynamoDB Local and
 * s3rver: a reindex only clears and marks; the scheduled pass indexes marks in invocations
 * bounded by a time budget; marks written meanwhile are kept; an index of the older layout (one
 * whole file per user) is upgraded by marking the user's sessions; one user's rebuild never
 * touches another's index.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { Appender, SearchIndexer, storedLines, Tokens } from "@pisync/core";
import { parseQuery } from "@pisync/search";
import { SearchMarks } from "@pisync/search/aws";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { type Stores, searchIndexKey, sessionPrefix } from "@pisync/store";
import { type AwsStoresConfig, awsStores, documentClient } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { event } from "@pisync/testing/lambda-events";
import type { LambdaContext } from "hono/aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IndexEvent } from "../src/continue-pass.js";
import { createSearchingHandler } from "../src/lambda.js";
import { maintainSearch } from "../src/lambda-search.js";

const context = {} as LambdaContext;
const SCHEDULED = { "detail-type": "Scheduled Event" } as const;
/** The scheduled pass's budget here, and what one bounded step (and a cold instance's module load) may add to it on a loaded machine. */
const BUDGET_MS = 150;
const MARGIN_MS = 5000;
const enc = (text: string) => new TextEncoder().encode(text);
/** A session whose entries' times differ from every other's (ties in rank are ordered by time). */
let clock = Date.parse("2026-01-01T00:00:00.000Z");
const at = () => {
  clock += 1000;
  return new Date(clock).toISOString();
};
const session = (id: string, texts: string[]) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n` +
  texts
    .map(
      (text, i) =>
        `${JSON.stringify({ type: "message", id: `m${i}`, parentId: i ? `m${i - 1}` : null, timestamp: at(), message: { role: "user", content: text, timestamp: 1 } })}\n`,
    )
    .join("");

describe("rebuilds in bounded invocations", () => {
  let config: AwsStoresConfig;
  let stores: Stores;
  let handler: ReturnType<typeof createSearchingHandler>;
  let marks: SearchMarks;
  let dir: string;
  const auth: Record<string, Record<string, string>> = {};

  beforeAll(async () => {
    config = await testAwsConfig();
    stores = awsStores(config);
    handler = createSearchingHandler(stores, {
      connection: config,
      table: config.table,
      indexBudgetMs: BUDGET_MS,
      searchBudgetMs: BUDGET_MS,
    });
    marks = new SearchMarks(config, config.table);
    dir = mkdtempSync(join(tmpdir(), "pisync-rebuild-"));
    for (const user of ["rebuilder", "bystander", "elder", "elder2", "chained"]) {
      auth[user] = { Authorization: `Bearer ${(await new Tokens(stores.meta).create(user, "test")).token}` };
    }
  });
  afterAll(() => {
    handler?.index.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, user: string, body?: string, headers = {}) =>
    (await handler(
      event("function-url", method, path, { ...auth[user], ...headers }, body ? enc(body) : undefined),
      context,
    )) as { statusCode: number; body: string };
  const search = async (user: string, q: string) => {
    const answer = await call("GET", `/v1/search?q=${encodeURIComponent(q)}&limit=50`, user);
    expect(answer.statusCode, answer.body).toBe(200);
    return (JSON.parse(answer.body) as { sessions: { sessionId: string }[] }).sessions.map((s) => s.sessionId);
  };
  /** Stores sessions without marks (as a store written before search, or by another path). */
  const store = async (user: string, count: number, prefix: string, words: (i: number) => string[]) => {
    const appender = new Appender(stores);
    for (let i = 0; i < count; i++) {
      const id = `${prefix}-${i}`;
      await appender.append({ userId: user, sessionId: id, offset: 0, body: enc(session(id, words(i))) });
    }
  };
  /** Runs scheduled invocations until the user has no marks: their durations. */
  const scheduledUntilDone = async (user: string) => {
    const took: number[] = [];
    for (let i = 0; i < 80 && (await marks.ofUser(user)).length > 0; i++) {
      const t0 = performance.now();
      await handler(SCHEDULED, context);
      took.push(performance.now() - t0);
    }
    expect(await marks.ofUser(user)).toEqual([]);
    return took;
  };
  /** The embedded adapter's answer for the same stored sessions. */
  const embedded = async (user: string, queries: string[]) => {
    const index = new SqliteSearchIndex(join(dir, `${user}.db`), storedLines(stores));
    try {
      await new SearchIndexer(stores, index).rebuild([user]);
      const answers: string[][] = [];
      for (const q of queries) {
        answers.push((await index.search(user, parseQuery(q), { limit: 50 })).sessions.map((s) => s.sessionId));
      }
      return answers;
    } finally {
      index.close();
    }
  };

  it("a reindex clears and marks; scheduled invocations within budget index the marks, keeping marks written meanwhile", async () => {
    const words = (i: number) => [`a common herring numbered word${i}`, `line two of ${i} with kelp`];
    await store("rebuilder", 30, "sess-rb", words);
    await store("bystander", 2, "sess-by", words);
    await handler({ pisync: "reindex", users: ["bystander"] }, context);
    await scheduledUntilDone("bystander");
    const s3 = await handler.s3Index();
    const bystander = await s3.pointers.get("bystander");
    expect(bystander).toBeDefined();

    const answer = await handler({ pisync: "reindex", users: ["rebuilder"] }, context);
    expect(answer).toMatchObject({ reindexed: ["rebuilder"] });
    // Cleared and marked, not indexed: the invocation did not index 30 sessions.
    expect(await handler.index.state("rebuilder", "sess-rb-0")).toBeUndefined();
    expect((await marks.ofUser("rebuilder")).length).toBe(30);

    const t0 = performance.now();
    await handler(SCHEDULED, context);
    const first = performance.now() - t0;
    expect(first).toBeLessThan(BUDGET_MS + MARGIN_MS);
    const left = (await marks.ofUser("rebuilder")).length;
    expect(left).toBeGreaterThan(0); // the budget ran out: the rest waits for the next run
    expect(left).toBeLessThan(30); // and it made progress

    // Written during the rebuild: a new session, and more lines of an indexed one.
    const late = session("sess-late", ["a late arriving narwhal"]);
    expect(
      (await call("PATCH", "/v1/sessions/sess-late", "rebuilder", late, { "Upload-Offset": "0" })).statusCode,
    ).toBe(200);
    const indexed = (await s3.sessions("rebuilder"))[0]?.sessionId as string;
    const head = await stores.meta.getHead("rebuilder", indexed);
    const more = `${JSON.stringify({ type: "message", id: "x9", parentId: "m1", timestamp: at(), message: { role: "user", content: "an appended walrus", timestamp: 2 } })}\n`;
    const patched = await call("PATCH", `/v1/sessions/${indexed}`, "rebuilder", more, {
      "Upload-Offset": String(head?.current.length),
    });
    expect(patched.statusCode, patched.body).toBe(200);

    const took = await scheduledUntilDone("rebuilder");
    expect(took.length).toBeGreaterThanOrEqual(1);
    for (const ms of took) expect(ms).toBeLessThan(BUDGET_MS + MARGIN_MS);
    expect(await handler.index.state("rebuilder", "sess-late")).toBeDefined();

    const queries = ["herring", "word7", "narwhal", "walrus", "kelp two"];
    const answers: string[][] = [];
    for (const q of queries) answers.push(await search("rebuilder", q));
    expect(answers).toEqual(await embedded("rebuilder", queries));
    expect(answers[2]).toEqual(["sess-late"]);
    expect(answers[3]).toEqual([indexed]);
    // Another user's index was not touched by this rebuild.
    expect((await s3.pointers.get("bystander"))?.rev).toBe(bystander?.rev);
    expect(await search("bystander", "herring")).toHaveLength(2);
  }, 120_000);

  it("a reindex starts a chain of passes that continue themselves, each within its budget, until no mark is due", async () => {
    const words = (i: number) => [`a chained albatross numbered word${i}`, `second line ${i} of tern`];
    // Enough sessions that no machine indexes the pass's leftovers within one budget: the chain must continue.
    const CHAINED = 48; // under a search page (50): the last check counts them all
    await store("chained", CHAINED, "sess-ch", words);
    // A session whose bytes are gone: it fails at every try, and must not keep the chain going.
    await store("chained", 1, "sess-broken", words);
    await stores.blobs.delete(await stores.blobs.list(sessionPrefix("chained", "sess-broken-0")));
    const sent: IndexEvent[] = [];
    const chained = createSearchingHandler(stores, {
      connection: config,
      table: config.table,
      indexBudgetMs: BUDGET_MS,
      continuePass: async (next) => {
        sent.push(next);
      },
    });
    try {
      expect(await chained({ pisync: "reindex", users: ["chained"] }, context)).toMatchObject({ marked: CHAINED + 1 });
      expect(sent).toHaveLength(1); // the first pass at once, not at the schedule's next minute
      // The schedule meanwhile: it passes, but starts no second chain.
      const scheduled = (await chained(SCHEDULED, context)) as { more: boolean };
      expect(scheduled.more).toBe(true);
      expect(sent).toHaveLength(1);

      const took: number[] = [];
      let duplicate = true;
      for (let links = 0; sent.length > 0; links++) {
        expect(links).toBeLessThan(80);
        const link = sent.shift() as IndexEvent;
        const t0 = performance.now();
        const pass = (await chained(link, context)) as { more: boolean; left: number };
        took.push(performance.now() - t0);
        // A continuation exactly when marks are still due.
        expect(sent.length, JSON.stringify(pass)).toBe(pass.more ? 1 : 0);
        if (duplicate) {
          // Delivered twice (asynchronous invocations are at least once): the second does nothing.
          duplicate = false;
          expect(await chained(link, context)).toMatchObject({ claimed: false, more: false });
          expect(sent.length).toBe(pass.more ? 1 : 0);
        }
      }
      expect(took.length).toBeGreaterThan(1);
      for (const ms of took) expect(ms).toBeLessThan(BUDGET_MS + MARGIN_MS);
      // Only the failing session's mark is left, put off: the chain ended, and the schedule finds nothing due.
      expect((await marks.ofUser("chained")).map((m) => [m.sessionId, m.attempts])).toEqual([["sess-broken-0", 1]]);
      expect(await chained(SCHEDULED, context)).toMatchObject({ indexed: 0, left: 0, more: false });
      expect(sent).toEqual([]);

      const queries = ["albatross", "word17", "tern second"];
      const answers: string[][] = [];
      for (const q of queries) answers.push(await search("chained", q));
      expect(answers).toEqual(await embedded("chained", queries));
      expect(answers[0]).toHaveLength(CHAINED);
    } finally {
      chained.index.close();
    }
  }, 180_000);

  it("upgrades an index of the older layout (one whole file per user): by a search, and by the scheduled pass", async () => {
    const words = (i: number) => [`an ancient coelacanth ${i}`];
    const legacy: Record<string, string> = {};
    const db = documentClient(config);
    for (const user of ["elder", "elder2"]) {
      await store(user, 6, `sess-${user}`, words);
      // As the previous adapter wrote it: one FTS5 file per user and a pointer { version, key }.
      const path = join(dir, `legacy-${user}.db`);
      const file = new SqliteSearchIndex(path, storedLines(stores));
      await new SearchIndexer(stores, file).rebuild([user]);
      file.close();
      legacy[user] = searchIndexKey(user, 1, "0a1b2c");
      await stores.blobs.put(legacy[user], readFileSync(path));
      await db.send(
        new PutCommand({
          TableName: config.table,
          Item: { pk: `X#${user}`, sk: "X", version: 1, key: legacy[user], gsi1pk: "XU", gsi1sk: user },
        }),
      );
    }
    db.destroy();

    // A search of the user upgrades it first: its sessions are marked and indexed (in bounded steps).
    let found: string[] = [];
    for (let i = 0; i < 40 && found.length < 6; i++) found = await search("elder", "coelacanth");
    expect(found.sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `sess-elder-${i}`));

    // The scheduled pass of a newly deployed instance upgrades a user nobody searches.
    const deployed = createSearchingHandler(stores, {
      connection: config,
      table: config.table,
      indexBudgetMs: BUDGET_MS,
    });
    try {
      for (let i = 0; i < 40 && (await deployed.index.sessions("elder2")).length < 6; i++) {
        const t0 = performance.now();
        await deployed(SCHEDULED, context);
        expect(performance.now() - t0).toBeLessThan(BUDGET_MS + MARGIN_MS);
      }
    } finally {
      deployed.index.close();
    }
    expect((await handler.index.sessions("elder2")).length).toBe(6);
    expect(await marks.ofUser("elder2")).toEqual([]);

    // The old files are removed by the upkeep once past its minimum age.
    const s3 = await handler.s3Index();
    await maintainSearch(s3, { minAgeMs: 0 });
    for (const user of ["elder", "elder2"]) {
      expect(await stores.blobs.list(legacy[user] as string)).toEqual([]);
      expect((await s3.pointers.get(user))?.rev).toBeGreaterThan(0);
    }
    expect((await search("elder2", "coelacanth")).length).toBe(6);
  });
});
