import { randomBytes } from "node:crypto";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { storedLines } from "@pisync/core";
import { type BlobStore, isSearchObjectKey, searchIndexKey } from "@pisync/store";
import { type AwsStoresConfig, awsStores, documentClient } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AmbiguousPointerWrite,
  decodeManifest,
  type Manifest,
  PassChain,
  type Pointer,
  S3SearchIndex,
  type S3SearchIndexConfig,
  SearchMarks,
} from "../src/aws/index.js";
import { decodeChange, decodePages, encodeChange, manifestKey } from "../src/aws/objects.js";
import { type IndexBatch, parseQuery } from "../src/index.js";
import { describeSearchContract, type SearchFixture } from "./contract.js";

let config: AwsStoresConfig;
let fixture: SearchFixture;
const opened: S3SearchIndex[] = [];

/** Another indexer of the same bucket and table, as another Lambda instance is: its own cache. */
function newIndex(options: Partial<S3SearchIndexConfig> = {}): S3SearchIndex {
  const stores = awsStores(config);
  const index = new S3SearchIndex({
    connection: config,
    table: config.table,
    blobs: stores.blobs,
    lines: storedLines(stores),
    ...options,
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

/** The objects a user's pointer names: its base's manifest, chunks, patches and hot pages, its log. */
async function named(index: S3SearchIndex, userId: string): Promise<string[]> {
  const pointer = await index.pointers.get(userId);
  if (!pointer) return [];
  const keys = pointer.log.map((entry) => entry.key);
  if (pointer.base) {
    const manifest = JSON.parse(new TextDecoder().decode(await awsStores(config).blobs.get(pointer.base.key)));
    keys.push(pointer.base.key, ...manifest.chunks, ...(manifest.hot ? [manifest.hot] : []));
    for (const patch of manifest.patches ?? []) keys.push(patch.key, ...(patch.hot ? [patch.hot] : []));
  }
  return keys;
}

/** The objects a manifest names: its chunks, hot pages and patches. */
const objectsOf = (manifest: Manifest) => [
  ...manifest.chunks,
  ...(manifest.hot ? [manifest.hot] : []),
  ...(manifest.patches ?? []).flatMap((patch) => [patch.key, ...(patch.hot ? [patch.hot] : [])]),
];

/** The length of the file a user's base holds (0 before the first compaction). */
async function baseBytes(index: S3SearchIndex, userId: string): Promise<number> {
  const pointer = await index.pointers.get(userId);
  if (!pointer?.base) return 0;
  return JSON.parse(new TextDecoder().decode(await awsStores(config).blobs.get(pointer.base.key))).length;
}

describe("the aws search index", () => {
  it("loses no indexer's work when several change one user's index at once", async () => {
    const indexes = [newIndex(), newIndex(), newIndex()];
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => indexes[i % 3].apply(batch("racer", `s${i}`, `concurrent gannet ${i}`))),
    );
    const expected = Array.from({ length: 12 }, (_, i) => `s${i}`).sort();
    for (const index of indexes) expect(await found(index, "racer", "gannet")).toEqual(expected);
  });

  it("loses nothing when writers race while their changes keep compacting the log", async () => {
    const folder = `folder-${randomBytes(4).toString("hex")}`;
    const indexes = [0, 1, 2].map(() =>
      newIndex({
        compactAfter: { entries: 3, bytes: 1 << 30 },
        compactOnChangeAfter: { entries: 3, bytes: 1 << 30 },
        eagerBytes: 0,
      }),
    );
    await Promise.all(
      Array.from({ length: 15 }, (_, i) => indexes[i % 3]?.apply(batch(folder, `s${i}`, `compacted grebe ${i}`))),
    );
    const expected = Array.from({ length: 15 }, (_, i) => `s${i}`).sort();
    for (const index of [...indexes, newIndex()]) expect(await found(index, folder, "grebe")).toEqual(expected);
    const pointer = await indexes[0]?.pointers.get(folder);
    expect(pointer?.base?.seq).toBeGreaterThanOrEqual(3); // compactions happened among the races
    expect((pointer?.base?.seq ?? 0) + (pointer?.log.length ?? 0)).toBe(15);
  });

  it("leaves a log past the threshold to a pass's upkeep, which folds it while it fits its budget", async () => {
    const user = `due-${randomBytes(4).toString("hex")}`;
    const limits = {
      compactAfter: { entries: 3, bytes: 1 << 30 },
      compactOnChangeAfter: { entries: 6, bytes: 1 << 30 },
    };
    const writer = newIndex(limits);
    for (let i = 0; i < 3; i++) await writer.apply(batch(user, `s${i}`, `deferred heron ${i}`));
    // Past the threshold: asked for, not folded on the change's path.
    let pointer = await writer.pointers.get(user);
    expect(pointer?.base).toBeUndefined();
    expect(pointer?.log).toHaveLength(3);
    expect(await writer.pointers.compactionsDue(1000)).toContain(user);
    // A fold that cannot end before the deadline waits for the next pass...
    expect(await writer.upkeep(Date.now() + 1)).toBe(0);
    expect((await writer.pointers.get(user))?.log).toHaveLength(3);
    // ...which starts with it, on another instance too (the request is durable).
    const pass = newIndex(limits);
    expect(await pass.upkeep(Date.now() + 1, { atLeastOne: true })).toBeGreaterThanOrEqual(1);
    pointer = await writer.pointers.get(user);
    expect(pointer?.log).toEqual([]);
    expect(pointer?.base?.seq).toBe(3);
    expect(await writer.pointers.compactionsDue(1000)).not.toContain(user);
    expect(await found(writer, user, "heron")).toEqual(["s0", "s1", "s2"]);
    // A request left for a log that is folded already (a lost delete, say) goes at the next upkeep, with nothing folded.
    await writer.pointers.requestCompaction(user);
    expect(await writer.pointers.compactionsDue(1000)).toContain(user);
    expect(await writer.upkeep(Date.now() + 60_000)).toBe(0);
    expect(await writer.pointers.compactionsDue(1000)).not.toContain(user);
    // No pass came: a change far past the threshold folds the log itself.
    for (let i = 3; i < 9; i++) await writer.apply(batch(user, `s${i}`, `deferred heron ${i}`));
    pointer = await writer.pointers.get(user);
    expect(pointer?.base?.seq).toBe(9);
    expect(pointer?.log).toEqual([]);
    expect(await found(newIndex(), user, "heron")).toHaveLength(9);
  });

  it("a pass's first fold whose copy cannot replay the log in time leaves it to the next pass, which folds from there", async () => {
    const user = `catch-up-${randomBytes(4).toString("hex")}`;
    const limits = {
      compactAfter: { entries: 3, bytes: 1 << 30 },
      compactOnChangeAfter: { entries: 100, bytes: 1 << 30 },
    };
    const writer = newIndex(limits);
    // No time to replay beyond the pass's deadline, which is spent.
    const pass = newIndex({ ...limits, foldCatchUpMs: 0 });
    for (let i = 0; i < 3; i++) await writer.apply(batch(user, `s${i}`, `a slow godwit ${i}`));
    // The pass's instance saw the log past the threshold itself (its first work), then fell two changes behind.
    await pass.apply(batch(user, "s3", "a slow godwit 3"));
    for (let i = 4; i < 6; i++) await writer.apply(batch(user, `s${i}`, `a slow godwit ${i}`));
    expect(await pass.upkeep(Date.now() - 1, { atLeastOne: true })).toBe(0);
    expect((await writer.pointers.get(user))?.log).toHaveLength(6);
    expect(await writer.pointers.compactionsDue(1000)).toContain(user);
    // The next pass, with time, folds the whole log from the copy it kept.
    expect(await pass.upkeep(Date.now() + 60_000, { atLeastOne: true })).toBeGreaterThanOrEqual(1);
    const pointer = await writer.pointers.get(user);
    expect(pointer?.log).toEqual([]);
    expect(pointer?.base?.seq).toBe(6);
    expect(await found(newIndex(), user, "godwit")).toHaveLength(6);
  });

  it("tries one failing fold per pass, whatever its budget, and puts it off: the requests behind it come first", async () => {
    const run = randomBytes(4).toString("hex");
    const users = [`failing-${run}-a`, `failing-${run}-b`];
    const limits = { compactAfter: { entries: 2, bytes: 1 << 30 } };
    const writer = newIndex(limits);
    for (const user of users)
      for (let i = 0; i < 2; i++) await writer.apply(batch(user, `s${i}`, `a stuck dipper ${i}`));
    // Another instance whose manifests never reach the bucket.
    const real = awsStores(config).blobs;
    let attempts = 0;
    const failing: BlobStore = {
      ...real,
      get: (key, range) => real.get(key, range),
      put: async (key, body) => {
        if (key.includes("/base/")) {
          attempts++;
          throw new Error("the bucket refused the manifest");
        }
        return real.put(key, body);
      },
    };
    const pass = newIndex({ ...limits, blobs: failing });
    expect(await pass.upkeep(Date.now() - 1, { atLeastOne: true })).toBe(0);
    expect(attempts).toBe(1);
    const due = await pass.pointers.compactionsDue(1000);
    expect(users.filter((user) => due.includes(user))).toHaveLength(1); // the one that failed waits
    // A working instance folds the other one (after other tests' requests, oldest first), then
    // nothing of these is due until the put-off request is.
    const worker = newIndex(limits);
    let left = await pass.pointers.compactionsDue(1000);
    for (let i = 0; i < 20 && users.some((user) => left.includes(user)); i++) {
      await worker.upkeep(Date.now() + 60_000, { atLeastOne: true });
      left = await pass.pointers.compactionsDue(1000);
    }
    expect(users.filter((user) => left.includes(user))).toEqual([]);
    const later = await pass.pointers.compactionsDue(1000, Date.now() + 11 * 60_000);
    expect(users.filter((user) => later.includes(user))).toHaveLength(1);
    for (const user of users) expect(await found(newIndex(), user, "dipper")).toEqual(["s0", "s1"]);
  });

  it("reads a patch of a file SQLite grew without writing every new page (holes read as zeros)", async () => {
    const user = `holes-${randomBytes(4).toString("hex")}`;
    const never = { entries: 1000, bytes: 1 << 30 };
    const writer = newIndex({ compactAfter: never, compactOnChangeAfter: never });
    await writer.apply(batch(user, "first", "a lonely kittiwake"));
    await writer.compact(user);
    // Sessions indexed again from the start and removed: FTS5 allocates and frees pages in one transaction.
    let seed = 1;
    for (let round = 0; round < 12; round++) {
      if (round % 5 === 4) await writer.remove(user, `r${round - 3}-0`);
      const sessions = 1 + (round % 7);
      await writer.applyAll(
        Array.from({ length: sessions }, (_, s) =>
          bulky(
            user,
            s % 2 && round > 3 ? `r${round - 2}-${s}` : `r${round}-${s}`,
            50 + ((round * 37 + s * 11) % 400),
            ++seed,
          ),
        ),
      );
      await writer.compact(user);
      for (const q of ["kittiwake", "w1a*"]) {
        const expected = await writer.search(user, parseQuery(q), { limit: 20 });
        for (const eagerBytes of [16 * 1024 * 1024, 0]) {
          expect(await newIndex({ eagerBytes }).search(user, parseQuery(q), { limit: 20 })).toEqual(expected);
        }
      }
    }
    // Another instance (a fresh copy) folds the next change.
    await writer.apply(batch(user, "later", "a later kittiwake"));
    expect((await newIndex().compact(user))?.published).toBe(true);
    expect(await found(newIndex(), user, "kittiwake")).toEqual(["first", "later"]);
  }, 120_000);

  it("reads the index another instance published, though its own copy was of an older version", async () => {
    const [a, b] = [newIndex(), newIndex()];
    await a.apply(batch("reader", "s1", "first puffin"));
    expect(await found(b, "reader", "puffin")).toEqual(["s1"]); // b caches version 1
    await a.apply(batch("reader", "s2", "second puffin")); // version 2 replaces version 1's object
    expect(await found(b, "reader", "puffin")).toEqual(["s1", "s2"]);
    await b.remove("reader", "s1"); // b changes from version 2, which it never had
    expect(await found(a, "reader", "puffin")).toEqual(["s2"]);
  });

  it("keeps only what the pointer names once swept: a folded log and replaced chunks go, clear removes all", async () => {
    const stores = awsStores(config);
    const index = newIndex();
    await index.apply(batch("tidy", "s1", "one"));
    await index.apply(batch("tidy", "s2", "two"));
    await index.compact("tidy");
    await index.remove("tidy", "s1");
    await index.compact("tidy");
    await index.sweep("tidy", 0);
    const kept = await stores.blobs.list("search/tidy/");
    expect(kept.sort()).toEqual((await named(index, "tidy")).sort());
    for (const key of kept) expect(isSearchObjectKey(key), key).toBe(true); // what verify knows, not "unknown"
    expect(kept.filter((key) => key.includes("/log/"))).toEqual([]);
    expect(await found(newIndex(), "tidy", "two")).toEqual(["s2"]);
    await index.clear("tidy");
    expect(await stores.blobs.list("search/tidy/")).toEqual([]);
    expect(await index.users()).not.toContain("tidy");
  });

  it("sweeps what a crash left behind once old enough, never what the pointer or a recent reader may read", async () => {
    const stores = awsStores(config);
    const index = newIndex();
    // Uploads whose pointer write never happened (the process died between the two), and an index of the older layout.
    const leftovers = ["search/sweeper/log/0000000000000009-crashed.json.gz", searchIndexKey("sweeper", 1, "old")];
    for (const key of leftovers) await stores.blobs.put(key, new TextEncoder().encode("not an index"));
    for (let i = 0; i < 4; i++) await index.apply(batch("sweeper", `s${i}`, `swept heron ${i}`));
    await index.compact("sweeper");
    expect((await index.sweep("sweeper")).removed).toBe(0); // all younger than the default minimum age
    const reader = newIndex();
    expect(await found(reader, "sweeper", "heron")).toHaveLength(4);
    await index.apply(batch("sweeper", "s4", "swept heron 4"));
    await index.sweep("sweeper", 0);
    const kept = await stores.blobs.list("search/sweeper/");
    for (const key of leftovers) expect(kept).not.toContain(key);
    expect(kept.sort()).toEqual((await named(index, "sweeper")).sort());
    expect(await found(reader, "sweeper", "heron")).toHaveLength(5);
    expect(await found(newIndex(), "sweeper", "heron")).toHaveLength(5);
  });

  it("gives a removed session's pages back when compacted with vacuum: the base shrinks, the rest is still found", async () => {
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
    await index.compact("shrinker");
    const before = await baseBytes(index, "shrinker");
    await index.remove("shrinker", "big");
    await index.compact("shrinker", { vacuum: true });
    expect(await baseBytes(index, "shrinker")).toBeLessThan(before / 2);
    expect(await found(index, "shrinker", "seal")).toEqual(["small"]);
    expect(await found(newIndex(), "shrinker", "walrus")).toEqual([]);
    expect(await found(newIndex(), "shrinker", "seal")).toEqual(["small"]);
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
      (await marks.due(1000)).marks
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

  it("marks many sessions in batches, their times in the order given (a rebuild's order)", async () => {
    const marks = new SearchMarks(config, config.table);
    const ids = Array.from({ length: 130 }, (_, i) => `s-${(130 - i).toString(36)}`); // not in key order
    await marks.markMany("many", ids);
    const listed = await marks.ofUser("many");
    expect(listed).toHaveLength(130);
    expect([...listed].sort((a, b) => a.at - b.at).map((m) => m.sessionId)).toEqual(ids);
    expect(listed.every((m) => m.at > 0)).toBe(true);
  });
});

describe("due marks", () => {
  it("are read a bounded number at a time, oldest first, writes' before a rebuild's and those of the earlier layout", async () => {
    const own = await testAwsConfig(); // a table of its own: every mark in it is this test's
    const marks = new SearchMarks(own, own.table);
    await marks.markMany("bulk", ["b1", "b2", "b3"]);
    await marks.mark("live", "l1");
    await marks.mark("live", "l2");
    const db = documentClient(own);
    // As a mark was written before marks were ordered by due time.
    await db.send(
      new PutCommand({
        TableName: own.table,
        Item: { pk: "X#old", sk: "D#o1", token: "t0", gsi1pk: "XD", gsi1sk: "old#o1" },
      }),
    );
    const ids = (read: { marks: { userId: string; sessionId: string }[] }) =>
      read.marks.map((m) => `${m.userId}/${m.sessionId}`);
    const first = await marks.due(3);
    expect(ids(first)).toEqual(["live/l1", "live/l2", "bulk/b1"]);
    expect(first.more).toBe(true);
    const all = await marks.due(10);
    expect(ids(all)).toEqual(["live/l1", "live/l2", "bulk/b1", "bulk/b2", "bulk/b3", "old/o1"]);
    expect(all.more).toBe(false);
    expect(all.marks.at(-1)).toMatchObject({ token: "t0", at: 0, attempts: 0 });
    db.destroy();
    marks.close();
  });

  it("put off a failed session's mark, longer at each failure, unless the session was written again", async () => {
    const own = await testAwsConfig();
    const marks = new SearchMarks(own, own.table);
    await marks.mark("u", "failing");
    await marks.mark("u", "fine");
    const now = Date.now() + 1000;
    const [failing] = (await marks.due(1, now)).marks;
    expect(failing?.sessionId).toBe("failing");
    const until = await marks.defer(failing as never, now);
    expect(until - now).toBe(10_000);
    // Not due before its time: a bounded read reaches the marks after it.
    expect((await marks.due(1, now)).marks.map((m) => m.sessionId)).toEqual(["fine"]);
    const again = (await marks.due(5, until)).marks.find((m) => m.sessionId === "failing");
    expect(again?.attempts).toBe(1);
    expect((await marks.defer(again as never, until)) - until).toBe(20_000);
    // Written again meanwhile: the new mark is due now, and a stale put-off leaves it so.
    const stale = (await marks.ofUser("u")).find((m) => m.sessionId === "failing");
    await marks.mark("u", "failing");
    await marks.defer(stale as never, Date.now());
    expect((await marks.due(5)).marks.map((m) => m.sessionId).sort()).toEqual(["failing", "fine"]);
    marks.close();
  });
});

describe("the chain of passes", () => {
  it("has one chain at a time; a link runs once; an ended or expired chain lets another start", async () => {
    const own = await testAwsConfig();
    const chain = new PassChain(own, own.table, 1000);
    const now = Date.now();
    const first = await chain.start(now);
    expect(first?.seq).toBe(1);
    expect(await chain.start(now + 10)).toBeUndefined(); // the schedule while the chain holds its lease
    const next = { chain: first?.chain as string, seq: 2 };
    expect(await chain.claim(next, now + 20)).toBe(true);
    expect(await chain.claim(next, now + 30)).toBe(false); // delivered twice
    expect(await chain.claim({ ...next, seq: 4 }, now + 30)).toBe(false); // not its next link
    await chain.end({ ...next, seq: 1 }); // an older link ends nothing
    expect(await chain.start(now + 40)).toBeUndefined();
    await chain.end(next);
    const second = await chain.start(now + 50);
    expect(second).toBeDefined();
    // Its continuation lost: after the lease, the schedule starts another, and the old chain's next link stops.
    const third = await chain.start(now + 50 + 1001);
    expect(third?.chain).not.toBe(second?.chain);
    expect(await chain.claim({ chain: second?.chain as string, seq: 2 }, now + 1100)).toBe(false);
  });
});

/**
 * The bucket seen through a counter of the bytes each way (the port is the only way to it), and
 * of `waits`: the reads begun while no other was under way (round trips a reader waited for in turn).
 */
function counting(blobs: BlobStore) {
  const counted = { up: 0, down: 0, waits: 0, puts: [] as string[], deleted: [] as string[] };
  let reading = 0;
  const wrapped: BlobStore = {
    put: async (key, body) => {
      counted.up += body.length;
      counted.puts.push(key);
      return blobs.put(key, body);
    },
    get: async (key, range) => {
      if (reading++ === 0) counted.waits++;
      try {
        const bytes = await blobs.get(key, range);
        counted.down += bytes.length;
        return bytes;
      } finally {
        reading--;
      }
    },
    delete: (keys) => {
      counted.deleted.push(...keys);
      return blobs.delete(keys);
    },
    list: (prefix) => blobs.list(prefix),
    listObjects: (prefix) => blobs.listObjects(prefix),
    uploadUrl: (key, expires, max) => blobs.uploadUrl(key, expires, max),
  };
  return { blobs: wrapped, counted };
}

/** A session of `entries` entries of generated prose (a few distinct words each), as one batch. */
function bulky(userId: string, sessionId: string, entries: number, seed: number): IndexBatch {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state;
  };
  const word = () => `w${(next() % 50_000).toString(36)}`;
  return {
    ...batch(userId, sessionId, ""),
    documents: Array.from({ length: entries }, (_, i) => ({
      entryId: `e${i}`,
      kind: "user" as const,
      role: "user" as const,
      text: Array.from({ length: 60 }, word).join(" "),
      time: i,
    })),
  };
}

describe("the aws search index's cost follows the change", () => {
  const sized = async (userId: string, sessions: number) => {
    const { blobs, counted } = counting(awsStores(config).blobs);
    const index = newIndex({ blobs });
    for (let s = 0; s < sessions; s++) await index.apply(bulky(userId, `bulk${s}`, 400, s + 1));
    await index.apply(batch(userId, "probe", "warming up"));
    await index.compact(userId);
    counted.up = 0;
    await index.apply({ ...batch(userId, "probe", "an appended kestrel"), from: 10, to: 20 });
    const up = counted.up;
    expect(await found(newIndex(), userId, "kestrel")).toEqual(["probe"]);
    return { up, stored: await baseBytes(index, userId) };
  };

  it("uploads for one append about the same bytes on a small index and on a larger one", async () => {
    const run = randomBytes(4).toString("hex");
    const small = await sized(`cost-small-${run}`, 1);
    const large = await sized(`cost-large-${run}`, 12);
    expect(large.stored).toBeGreaterThan(8 * small.stored); // the indexes differ by a megabyte
    expect(Math.abs(large.up - small.up)).toBeLessThan(256 * 1024);
    expect(large.up).toBeLessThan(256 * 1024);
  });

  it("folds a few small appends into a patch of the pages they wrote, about the same bytes on a small index and a larger one", async () => {
    const run = randomBytes(4).toString("hex");
    const folded = async (userId: string, sessions: number) => {
      const { blobs, counted } = counting(awsStores(config).blobs);
      const index = newIndex({ blobs });
      for (let s = 0; s < sessions; s++) await index.apply(bulky(userId, `bulk${s}`, 400, s + 1));
      await index.compact(userId);
      for (let i = 0; i < 8; i++) await index.apply(batch(userId, `probe${i}`, `an appended shearwater${i}`));
      counted.up = 0;
      await index.compact(userId);
      const manifest = decodeManifest(
        await awsStores(config).blobs.get((await index.pointers.get(userId))?.base?.key as string),
      );
      expect(await found(newIndex({ eagerBytes: 0 }), userId, "shearwater7")).toEqual(["probe7"]);
      return { up: counted.up, stored: manifest.length, patches: manifest.patches?.length ?? 0 };
    };
    const small = await folded(`fold-small-${run}`, 1);
    const large = await folded(`fold-large-${run}`, 12);
    expect(large.stored).toBeGreaterThan(8 * small.stored);
    // Whole chunks (and the hot pages again) were 234 kB and 689 kB here; a patch is under 90 kB on both.
    expect(Math.abs(large.up - small.up)).toBeLessThan(64 * 1024);
    expect(large.up).toBeLessThan(large.stored / 10);
    expect([small.patches, large.patches]).toEqual([1, 1]);
  });

  it("rewrites the chunks of a dense fold (a rebuild's step), merging the patches on a base with some, and patches a sparse one", async () => {
    const user = `dense-${randomBytes(4).toString("hex")}`;
    const kinds: Array<string | undefined> = [];
    const writer = newIndex({ onCompaction: (report) => kinds.push(report.kind) });
    await writer.apply(batch(user, "first", "a lonely kittiwake"));
    await writer.compact(user);
    await writer.applyAll(Array.from({ length: 64 }, (_, s) => bulky(user, `bulk${s}`, 800, 300 + s)));
    await writer.compact(user);
    await writer.apply(batch(user, "late", "a late kittiwake"));
    await writer.compact(user);
    await writer.applyAll(Array.from({ length: 64 }, (_, s) => bulky(user, `more${s}`, 800, 500 + s)));
    await writer.apply(batch(user, "last", "the last kittiwake"));
    await writer.compact(user);
    expect(kinds).toEqual(["chunks", "chunks", "patch", "merge"]);
    const merged = decodeManifest(
      await awsStores(config).blobs.get((await writer.pointers.get(user))?.base?.key as string),
    );
    // The dense fold's pages went to chunks: what the merge kept in a patch is a small part of them.
    const kept = (merged.patches ?? []).reduce((n, p) => n + decodePages(p.pages).length * merged.pageBytes, 0);
    expect(kept).toBeLessThan(merged.length / 8);
    expect((await found(newIndex({ eagerBytes: 0 }), user, "kittiwake")).sort()).toEqual(["first", "last", "late"]);
  }, 120_000);

  it("reads the same through many patches and the merge past their bound: fresh, moved along, and the writer's copy", async () => {
    const user = `patched-${randomBytes(4).toString("hex")}`;
    const kinds: Array<string | undefined> = [];
    const writer = newIndex({ chunkBytes: 16 * 1024, onCompaction: (report) => kinds.push(report.kind) });
    for (let s = 0; s < 4; s++) await writer.apply(bulky(user, `bulk${s}`, 300, 70 + s));
    await writer.compact(user);
    const held = newIndex({ eagerBytes: 0 });
    const query = parseQuery("kittiwake");
    await held.search(user, query, { limit: 50 });
    const patchCounts: number[] = [];
    const merged: Manifest[] = [];
    const bases: Manifest[] = [];
    for (let i = 0; i < 20; i++) {
      // New sessions and appends to old ones: pages written all over the file.
      const sessionId = i % 2 ? `bulk${i % 4}` : `new${i}`;
      const from = i % 2 ? ((await writer.state(user, sessionId))?.offset ?? 0) : 0;
      await writer.apply({ ...bulky(user, sessionId, 20, 900 + i), from, to: from + 10 });
      await writer.apply({ ...batch(user, `bird${i}`, `a kittiwake nests, ring k${i}`) });
      // The merge is another instance's, from a copy that fetched only what a query read: it fetches the patches it keeps pages of.
      const lazy = () => newIndex({ eagerBytes: 0, chunkBytes: 16 * 1024, onCompaction: (r) => kinds.push(r.kind) });
      await (patchCounts.at(-1) === 16 ? lazy() : writer).compact(user);
      const key = (await writer.pointers.get(user))?.base?.key as string;
      const manifest = decodeManifest(await awsStores(config).blobs.get(key));
      patchCounts.push(manifest.patches?.length ?? 0);
      bases.push(manifest);
      if (kinds.at(-1) === "merge") merged.push(manifest);
      if (i % 4 === 3 || i === 19) {
        const expected = await writer.search(user, query, { limit: 50 });
        expect(expected.sessions).toHaveLength(i + 1);
        expect(await newIndex({ eagerBytes: 0 }).search(user, query, { limit: 50 })).toEqual(expected);
        expect(await held.search(user, query, { limit: 50 })).toEqual(expected);
      }
    }
    // Patches pile up to their bound; the fold past it merges them: some chunks rewritten, the other pages in one patch.
    expect(Math.max(...patchCounts)).toBe(16);
    expect(merged).toHaveLength(1);
    const [before, after] = [bases[patchCounts.indexOf(16)] as Manifest, merged[0] as Manifest];
    expect(after.patches).toHaveLength(1);
    // Kept chunks are the same objects; the merged patch holds fewer pages than the sixteen did.
    expect(after.chunks.filter((key, i) => before.chunks[i] === key).length).toBeGreaterThan(0);
    const pageCount = (m: Manifest) => (m.patches ?? []).reduce((n, p) => n + decodePages(p.pages).length, 0);
    expect(pageCount(after)).toBeLessThan(pageCount(before));
    await writer.sweep(user, 0);
    expect((await awsStores(config).blobs.list(`search/${user}/`)).sort()).toEqual((await named(writer, user)).sort());
    expect(await found(newIndex({ eagerBytes: 0 }), user, "k19")).toEqual(["bird19"]);
  }, 120_000);

  /** A base of 12 bulky sessions and a "needle" one (a solitary wryneck), in chunks of 32 KiB: its writer. */
  const needleBase = async (userId: string, seed: number) => {
    const writer = newIndex({ chunkBytes: 32 * 1024 });
    for (let s = 0; s < 12; s++) await writer.apply(bulky(userId, `bulk${s}`, 400, seed + s));
    await writer.apply(batch(userId, "needle", "a solitary wryneck"));
    await writer.compact(userId);
    return writer;
  };

  /**
   * A base of 12 bulky sessions whose every entry also holds "puffin" (a common word), in chunks
   * of 16 KiB (the rows of the entries it ranks are in many of them): its writer.
   */
  const puffinBase = async (userId: string, seed: number) => {
    const writer = newIndex({ chunkBytes: 16 * 1024 });
    for (let s = 0; s < 12; s++) {
      const bulk = bulky(userId, `bulk${s}`, 400, seed + s);
      for (const doc of bulk.documents) doc.text += " puffin";
      await writer.apply(bulk);
    }
    await writer.compact(userId);
    return writer;
  };

  it("answers a fresh instance's query by fetching fewer bytes than the index holds", async () => {
    const lazy = `lazy-${randomBytes(4).toString("hex")}`;
    const writer = await needleBase(lazy, 100);
    const stored = await baseBytes(writer, lazy);
    expect(stored).toBeGreaterThan(1_000_000);
    const { blobs, counted } = counting(awsStores(config).blobs);
    expect(await found(newIndex({ blobs, eagerBytes: 0 }), lazy, "wryneck")).toEqual(["needle"]);
    expect(counted.down).toBeLessThan(stored / 2);
  });

  it("fetches with a fresh instance's first chunk the pages every query reads: its first query waits on its leaves only", async () => {
    const user = `hot-${randomBytes(4).toString("hex")}`;
    await needleBase(user, 200);
    const first = async (options: Partial<S3SearchIndexConfig>, q: string) => {
      const { blobs, counted } = counting(awsStores(config).blobs);
      return { found: await found(newIndex({ blobs, eagerBytes: 0, ...options }), user, q), ...counted };
    };
    for (const q of ["wryneck", "nowhereword"]) {
      const lazily = await first({ hotPages: false }, q);
      const hot = await first({}, q);
      expect(hot.found).toEqual(lazily.found);
      expect(hot.found).toEqual(q === "wryneck" ? ["needle"] : []);
      // Without: the manifest, the first chunk, then a wait per page each statement misses in
      // turn (the schema's, each segment's leaf for the word, the entries'). With: the manifest,
      // the first chunk and the hot pages, every segment's leaf at once, then the entries' leaves.
      expect(hot.waits).toBeLessThan(lazily.waits);
      expect(hot.waits).toBeLessThanOrEqual(5);
    }
  }, 120_000);

  it("fetches at once, stage by stage, what a fresh instance's first query of a common word reads", async () => {
    const user = `doclist-${randomBytes(4).toString("hex")}`;
    const writer = await puffinBase(user, 300);
    const first = async (q: string) => {
      const { blobs, counted } = counting(awsStores(config).blobs);
      const index = newIndex({ blobs, eagerBytes: 0 });
      return { page: await index.search(user, parseQuery(q), { limit: 50 }), waits: counted.waits };
    };
    for (const q of ["puffin", "puff*"]) {
      const fresh = await first(q);
      expect(fresh.page.sessions.length).toBeGreaterThan(1);
      expect(fresh.page).toEqual(await writer.search(user, parseQuery(q), { limit: 50 }));
      // The manifest; the first chunk and the hot pages; the word's doclists; the rows of the
      // entries it ranks (their lengths for bm25, their facts); their sessions' rows. Not a wait
      // per chunk (or per growing batch of chunks) the query misses in turn.
      expect(fresh.waits).toBeLessThanOrEqual(5);
    }
  }, 120_000);

  it("keeps what a copy fetched across another writer's compaction: it fetches what changed, not the index again", async () => {
    const user = `moved-${randomBytes(4).toString("hex")}`;
    const writer = await puffinBase(user, 500);
    const reader = counting(awsStores(config).blobs);
    const held = newIndex({ blobs: reader.blobs, eagerBytes: 0 });
    const query = parseQuery("puffin");
    await held.search(user, query, { limit: 50 });
    const manifestOf = async () => {
      const key = (await writer.pointers.get(user))?.base?.key as string;
      const body = await awsStores(config).blobs.get(key);
      return { key, bytes: body.length, manifest: decodeManifest(body) };
    };
    const before = await manifestOf();
    // Another writer adds a session and folds the log: a new base, most of its chunks the old ones.
    await writer.apply(batch(user, "late", "a late puffin and a kittiwake"));
    await writer.compact(user);
    const after = await manifestOf();
    reader.counted.down = 0;
    const expected = await writer.search(user, query, { limit: 50 });
    expect(await held.search(user, query, { limit: 50 })).toEqual(expected);
    expect(await found(held, user, "kittiwake")).toEqual(["late"]);
    const moved = reader.counted.down;
    const fresh = counting(awsStores(config).blobs);
    expect(await newIndex({ blobs: fresh.blobs, eagerBytes: 0 }).search(user, query, { limit: 50 })).toEqual(expected);
    expect((await manifestOf()).key).toBe(after.key); // nothing moved meanwhile
    // At most: the new manifest, and the objects it names that the old base did not (chunks, patches, hot pages).
    const old = new Set(objectsOf(before.manifest));
    let added = 0;
    for (const key of objectsOf(after.manifest))
      if (!old.has(key)) added += (await awsStores(config).blobs.get(key)).length;
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThan(after.manifest.length / 4);
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThanOrEqual(after.bytes + added);
    expect(moved).toBeLessThan(fresh.counted.down);
  }, 120_000);

  it("replays a logged change by fetching at once the pages its writer read, not a chunk per miss", async () => {
    const user = `replay-${randomBytes(4).toString("hex")}`;
    const writer = newIndex({ chunkBytes: 16 * 1024 });
    for (let s = 0; s < 40; s++) await writer.apply(bulky(user, `bulk${s}`, 400, 700 + s));
    await writer.apply(batch(user, "needle", "a solitary wryneck"));
    await writer.compact(user);
    // Changes the log keeps (none folded): each appends to sessions spread over the base.
    const ends = new Map<string, number>();
    for (let c = 0; c < 6; c++) {
      const batches = Array.from({ length: 4 }, (_, s) => {
        const session = `bulk${(c * 13 + s * 7) % 40}`;
        const from = ends.get(session) ?? 10;
        ends.set(session, from + 1);
        return { ...bulky(user, session, 30, 900 + c * 4 + s), from, to: from + 1 };
      });
      expect(await writer.applyAll(batches)).toEqual([true, true, true, true]);
    }
    await writer.apply({ ...batch(user, "needle", "and a late dotterel"), from: 10, to: 20 });
    const pointer = await writer.pointers.get(user);
    expect(pointer?.log.length).toBe(7);
    const fresh = async () => {
      const { blobs, counted } = counting(awsStores(config).blobs);
      const answer = await found(newIndex({ blobs, eagerBytes: 0 }), user, "dotterel");
      return { answer, ...counted };
    };
    const hinted = await fresh();
    // The same log without the pages each change read (as changes were logged before they named them).
    const stores = awsStores(config);
    for (const entry of pointer?.log ?? []) {
      const change = decodeChange(await stores.blobs.get(entry.key));
      expect(decodePages(change.reads ?? "").length).toBeGreaterThan(0);
      delete change.reads;
      await stores.blobs.put(entry.key, encodeChange(change));
    }
    const missed = await fresh();
    expect(hinted.answer).toEqual(["needle"]);
    expect(missed.answer).toEqual(["needle"]);
    // Here 9 waits and 1.5 MB against 35 and 4.4 MB: each change's pages at once, not a miss (and the chunks after it) at a time.
    expect(hinted.waits * 2).toBeLessThan(missed.waits);
    expect(hinted.down).toBeLessThan(missed.down);
  }, 120_000);

  it("fetches at once, before a lazy copy's append, the leaves its share of FTS5's merge work will read", async () => {
    const run = randomBytes(4).toString("hex");
    /** One lazy instance's 70 small appends on a base of 24 sessions (the same base each time): the waits of each. */
    const appends = async (user: string, hotPages: boolean) => {
      const writer = newIndex({ chunkBytes: 16 * 1024 });
      for (let s = 0; s < 100; s++) await writer.apply(bulky(user, `bulk${s}`, 30, 40 + s));
      await writer.compact(user);
      const { blobs, counted } = counting(awsStores(config).blobs);
      const lazy = newIndex({ blobs, eagerBytes: 0, hotPages });
      const waits: number[] = [];
      for (let i = 0; i < 70; i++) {
        const before = counted.waits;
        expect(await lazy.apply(batch(user, `tiny${i}`, `a small append, number ${i}`))).toBe(true);
        waits.push(counted.waits - before);
      }
      expect(await found(newIndex(), user, "69")).toEqual(["tiny69"]);
      return waits.slice(1); // the first opened the copy
    };
    const missed = await appends(`merge-missed-${run}`, false);
    const fetched = await appends(`merge-fetched-${run}`, true);
    // Here the append whose merge work read the base's segments waited 5 times, and once with them fetched first.
    const merging = missed.indexOf(Math.max(...missed));
    expect(missed[merging]).toBeGreaterThanOrEqual(3);
    expect((fetched[merging] as number) * 2).toBeLessThan(missed[merging] as number);
    expect(fetched.reduce((n, w) => n + w, 0)).toBeLessThan(missed.reduce((n, w) => n + w, 0));
  }, 180_000);

  it("reads a base written before hot pages existed, and its next compaction writes them", async () => {
    const user = `oldbase-${randomBytes(4).toString("hex")}`;
    const stores = awsStores(config);
    const writer = newIndex({ chunkBytes: 32 * 1024 });
    for (let s = 0; s < 3; s++) await writer.apply(bulky(user, `bulk${s}`, 400, 300 + s));
    await writer.apply(batch(user, "old", "an elderly nuthatch"));
    await writer.compact(user);
    // The same base under a manifest of the earlier format: no hot pages.
    const pointer = (await writer.pointers.get(user)) as Pointer;
    const base = pointer.base as { key: string; seq: number };
    const { hot, ...older } = decodeManifest(await stores.blobs.get(base.key));
    expect(hot).toBeDefined();
    const olderKey = manifestKey(user, base.seq);
    await stores.blobs.put(olderKey, new TextEncoder().encode(JSON.stringify(older)));
    expect(
      await writer.pointers.move(user, pointer, { ...pointer, rev: pointer.rev + 1, base: { ...base, key: olderKey } }),
    ).toBe(true);
    expect(await found(newIndex({ eagerBytes: 0 }), user, "nuthatch")).toEqual(["old"]);
    const next = newIndex({ eagerBytes: 0, chunkBytes: 32 * 1024 });
    await next.apply(batch(user, "new", "a youthful nuthatch"));
    await next.compact(user);
    const made = decodeManifest(await stores.blobs.get((await next.pointers.get(user))?.base?.key as string));
    expect(made.hot).toBeDefined();
    expect(await found(newIndex({ eagerBytes: 0 }), user, "nuthatch")).toEqual(["new", "old"]);
  }, 120_000);

  it("resolves a pointer write whose answer was lost by reading the pointer: applied once, nothing deleted", async () => {
    const { blobs, counted } = counting(awsStores(config).blobs);
    const index = newIndex({ blobs });
    await index.apply(batch("unsure", "s1", "first owl"));
    const move = index.pointers.move.bind(index.pointers);
    const faults = ["lost-after", "lost-before"];
    index.pointers.move = async (userId, from, to) => {
      const fault = faults.shift();
      const moved = fault === "lost-before" ? false : await move(userId, from, to);
      if (fault) throw new AmbiguousPointerWrite("the answer was lost", { cause: new Error("socket hang up") });
      return moved;
    };
    expect(await index.apply({ ...batch("unsure", "s1", "second owl"), from: 10, to: 20 })).toBe(true);
    expect(await index.apply({ ...batch("unsure", "s1", "third owl"), from: 20, to: 30 })).toBe(true);
    expect(faults).toEqual([]);
    expect((await index.pointers.get("unsure"))?.log.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(counted.deleted).toEqual([]);
    for (const reader of [index, newIndex()]) {
      expect(await reader.state("unsure", "s1")).toEqual({ generation: 1, offset: 30 });
      expect(await found(reader, "unsure", "owl")).toEqual(["s1"]);
    }
  });
});
