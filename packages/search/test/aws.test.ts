import { storedLines } from "@pisync/core";
import { searchIndexKey } from "@pisync/store";
import { type AwsStoresConfig, awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3SearchIndex, SearchMarks } from "../src/aws/index.js";
import { type IndexBatch, parseQuery } from "../src/index.js";
import { describeSearchContract, type SearchFixture } from "./contract.js";

let config: AwsStoresConfig;
let fixture: SearchFixture;
const opened: S3SearchIndex[] = [];

/** Another indexer of the same bucket and table, as another Lambda instance is: its own cache. */
function newIndex(): S3SearchIndex {
  const stores = awsStores(config);
  const index = new S3SearchIndex({
    connection: config,
    table: config.table,
    blobs: stores.blobs,
    lines: storedLines(stores),
  });
  opened.push(index);
  return index;
}

beforeAll(async () => {
  config = await testAwsConfig();
  fixture = { index: newIndex(), stores: awsStores(config) };
});
afterAll(() => {
  for (const index of opened) index.close();
});

describeSearchContract("aws (FTS5 files in S3, pointers in DynamoDB)", async () => fixture);

const batch = (userId: string, sessionId: string, text: string): IndexBatch => ({
  userId,
  sessionId,
  generation: 1,
  from: 0,
  to: 10,
  documents: [{ entryId: "e1", kind: "user", role: "user", text, time: 1 }],
  labels: {},
});
const found = async (index: S3SearchIndex, userId: string, q: string) =>
  (await index.search(userId, parseQuery(q), { limit: 50 })).sessions.map((s) => s.sessionId).sort();

describe("the aws search index", () => {
  it("loses no indexer's work when several change one user's index at once", async () => {
    const indexes = [newIndex(), newIndex(), newIndex()];
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => indexes[i % 3].apply(batch("racer", `s${i}`, `concurrent gannet ${i}`))),
    );
    const expected = Array.from({ length: 12 }, (_, i) => `s${i}`).sort();
    for (const index of indexes) expect(await found(index, "racer", "gannet")).toEqual(expected);
  });

  it("reads the index another instance published, though its own copy was of an older version", async () => {
    const [a, b] = [newIndex(), newIndex()];
    await a.apply(batch("reader", "s1", "first puffin"));
    expect(await found(b, "reader", "puffin")).toEqual(["s1"]); // b caches version 1
    await a.apply(batch("reader", "s2", "second puffin")); // version 2 replaces version 1's object
    expect(await found(b, "reader", "puffin")).toEqual(["s1", "s2"]);
    await b.remove("reader", "s1"); // b changes from version 2, which it never had
    expect(await found(a, "reader", "puffin")).toEqual(["s2"]);
  });

  it("keeps one object per user: a replaced version's object is deleted", async () => {
    const stores = awsStores(config);
    const index = newIndex();
    await index.apply(batch("tidy", "s1", "one"));
    await index.apply(batch("tidy", "s2", "two"));
    await index.remove("tidy", "s1");
    expect(await stores.blobs.list("search/tidy/")).toHaveLength(1);
    await index.clear("tidy");
    expect(await stores.blobs.list("search/tidy/")).toEqual([]);
    expect(await index.users()).not.toContain("tidy");
  });

  it("removes the objects a crash left behind, in time, and never the one the pointer names", async () => {
    const stores = awsStores(config);
    const index = newIndex();
    // An upload whose pointer write never happened (the process died between the two).
    const leftover = searchIndexKey("sweeper", 1, "crashed");
    await stores.blobs.put(leftover, new TextEncoder().encode("not an index"));
    for (let i = 0; i < 16; i++) await index.apply(batch("sweeper", `s${i}`, `swept heron ${i}`));
    const kept = await stores.blobs.list("search/sweeper/");
    expect(kept).toHaveLength(1);
    expect(kept).not.toContain(leftover);
    expect(await found(newIndex(), "sweeper", "heron")).toHaveLength(16);
  });

  it("gives a removed session's pages back: the file shrinks, the rest is still found", async () => {
    const stores = awsStores(config);
    const index = newIndex();
    const big: IndexBatch = {
      ...batch("shrinker", "big", ""),
      documents: Array.from({ length: 400 }, (_, i) => ({
        entryId: `e${i}`,
        kind: "user" as const,
        role: "user" as const,
        text: `bulky walrus ${i} ${"filler words that take room ".repeat(40)}`,
        time: i,
      })),
    };
    await index.applyAll([big, batch("shrinker", "small", "a small seal")]);
    const size = async () =>
      (await stores.blobs.get((await stores.blobs.list("search/shrinker/"))[0] as string)).length;
    const before = await size();
    await index.remove("shrinker", "big");
    expect(await size()).toBeLessThan(before / 2);
    expect(await found(index, "shrinker", "seal")).toEqual(["small"]);
    expect(await found(newIndex(), "shrinker", "walrus")).toEqual([]);
  });

  it("writes nothing for a change that changes nothing", async () => {
    const stores = awsStores(config);
    const index = newIndex();
    expect(await index.apply({ ...batch("idle", "s1", "x"), from: 5 })).toBe(false);
    await index.remove("idle", "s1");
    expect(await stores.blobs.list("search/idle/")).toEqual([]);
    expect(await index.users()).not.toContain("idle");
  });
});

describe("search marks", () => {
  it("are listed per user and for everyone, and removed only by the indexer that read them", async () => {
    const marks = new SearchMarks(config, config.table);
    await marks.mark("marker", "s1");
    await marks.mark("marker", "s2");
    await marks.mark("marker-2", "s1");
    const mine = await marks.ofUser("marker");
    expect(mine.map((m) => m.sessionId).sort()).toEqual(["s1", "s2"]);
    expect(
      (await marks.all())
        .filter((m) => m.userId.startsWith("marker"))
        .map((m) => `${m.userId}/${m.sessionId}`)
        .sort(),
    ).toEqual(["marker-2/s1", "marker/s1", "marker/s2"]);
    const s1 = mine.find((m) => m.sessionId === "s1");
    await marks.mark("marker", "s1"); // written again while it was being indexed
    if (s1) await marks.done(s1); // the stale mark's removal leaves the new one
    expect((await marks.ofUser("marker")).map((m) => m.sessionId).sort()).toEqual(["s1", "s2"]);
    for (const mark of await marks.ofUser("marker")) await marks.done(mark);
    expect(await marks.ofUser("marker")).toEqual([]);
    expect(await marks.ofUser("marker-2")).toHaveLength(1);
  });
});
