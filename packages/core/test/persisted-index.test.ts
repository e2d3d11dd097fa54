/**
 * Persisted tree indexes, on both store pairs: a fresh reader of a large session reads its
 * persisted index instead of its pages; a stale one is extended by the pages appended since; a
 * corrupt one is never served (the pages are read, and it is written again); another user's is
 * never read; a deleted session takes its indexes with it.
 */
import { gzipSync } from "node:zlib";
import { PREFIXES, parsePersistedIndexKey, type Stores, sessionIndexPrefix } from "@pisync/store";
import { countingPages, describeOnEveryStore, withoutPersistedIndexes } from "@pisync/testing";
import { expect, it } from "vitest";
import { Reader } from "../src/index.js";
import { decodeIndex, keyOf, ownerOf, PERSIST_MIN_LINES } from "../src/persisted-index.js";
import { append } from "./large-session.js";

/** The stores with what they read counted: index page records, and blob reads by key. */
function counting(stores: Stores) {
  const pages = countingPages(stores);
  const read = Object.assign(pages.read, { gets: [] as string[] });
  const blobs = Object.create(stores.blobs) as Stores["blobs"];
  blobs.get = (key, range) => {
    read.gets.push(key);
    return stores.blobs.get(key, range);
  };
  return { stores: { meta: pages.stores.meta, blobs }, read };
}

/** What a reader answers of a session: its tree, and the context of its default leaf and of a branch. */
async function answers(reader: Reader, userId: string, sessionId: string) {
  const tree = await reader.tree(userId, sessionId);
  const context = await reader.context(userId, sessionId);
  const branch = await reader.context(userId, sessionId, "e500");
  return { tree, context, branch };
}

const indexKeys = (stores: Stores, userId: string, sessionId: string) =>
  stores.blobs.list(sessionIndexPrefix(userId, sessionId));

describeOnEveryStore("persisted tree indexes", (pair) => {
  const N = PERSIST_MIN_LINES + 500;

  it("lets a fresh reader answer a large session from its persisted index, reading none of its pages", async () => {
    const { stores } = pair();
    await append(stores, "alice", "big", "a", 0, 1500);
    await append(stores, "alice", "big", "a", 1500, N);
    const first = new Reader(stores);
    const built = await answers(first, "alice", "big");
    await first.settled();
    const keys = await indexKeys(stores, "alice", "big");
    expect(keys).toHaveLength(1);
    const head = await stores.meta.getHead("alice", "big");
    expect(parsePersistedIndexKey(keys[0] as string)?.length).toBe(head?.current.length);

    const counted = counting(stores);
    const fresh = new Reader(counted.stores);
    expect(await answers(fresh, "alice", "big")).toEqual(built);
    expect(counted.read.records).toBe(0);
    expect(counted.read.gets.filter((key) => key.startsWith(PREFIXES.indexes))).toEqual(keys);
    await fresh.settled();
    expect(await indexKeys(stores, "alice", "big")).toEqual(keys); // nothing new to write
  });

  it("extends a stale persisted index by the pages appended since, with the answers of a rebuild", async () => {
    const { stores } = pair();
    await append(stores, "alice", "grows", "g", 0, N);
    const first = new Reader(stores);
    await first.tree("alice", "grows");
    await first.settled();
    const [persisted] = await indexKeys(stores, "alice", "grows");
    await append(stores, "alice", "grows", "g", N, N + 1200);

    const rebuilt = await answers(new Reader(withoutPersistedIndexes(stores)), "alice", "grows");
    const counted = counting(stores);
    const fresh = new Reader(counted.stores);
    expect(await answers(fresh, "alice", "grows")).toEqual(rebuilt);
    expect(rebuilt.tree.entries).toHaveLength(N + 1200 - 1);
    // Only the records appended since were read from the pages.
    expect(counted.read.records).toBe(1200);
    // That many is worth writing again: the longer index replaces the shorter one.
    await fresh.settled();
    const keys = await indexKeys(stores, "alice", "grows");
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toBe(persisted);
    const head = await stores.meta.getHead("alice", "grows");
    expect(parsePersistedIndexKey(keys[0] as string)?.length).toBe(head?.current.length);
  });

  it("never serves a corrupt or altered persisted index: it reads the pages and writes the index again", async () => {
    const { stores } = pair();
    await append(stores, "alice", "torn", "t", 0, N);
    const rebuilt = await answers(new Reader(withoutPersistedIndexes(stores)), "alice", "torn");
    const first = new Reader(stores);
    await first.tree("alice", "torn");
    await first.settled();
    const [key] = (await indexKeys(stores, "alice", "torn")) as [string];
    const intact = await stores.blobs.get(key);
    const text = (await import("node:zlib")).gunzipSync(intact).toString("utf8");
    const corruptions = [
      new Uint8Array(4096).fill(7), // garbage
      intact.subarray(0, intact.length >> 1), // torn
      gzipSync(text.replace("t turn 1000", "t turn 6666")), // altered body, same header
      gzipSync(text.replace('"version":1', '"version":2')), // a format this reader does not know
      gzipSync(`{}\n${text.slice(text.indexOf("\n") + 1)}`), // no header
    ];
    const head = await stores.meta.getHead("alice", "torn");
    for (const bad of corruptions) {
      await stores.blobs.put(key, bad);
      const counted = counting(stores);
      const fresh = new Reader(counted.stores);
      expect(await answers(fresh, "alice", "torn")).toEqual(rebuilt);
      expect(counted.read.records).toBe(N - 1); // every line but the header
      await fresh.settled();
      // Written again, intact.
      const again = await stores.blobs.get(key);
      expect(await decodeIndex(again, ownerOf(head!, head!.current), head!.current.length)).toBeDefined();
    }
  });

  it("never reads another user's persisted index, even one copied under this user's key", async () => {
    const { stores } = pair();
    await append(stores, "alice", "same", "alice", 0, N);
    await append(stores, "bob", "same", "bob", 0, N);
    const alice = new Reader(stores);
    await alice.tree("alice", "same");
    await alice.settled();
    const [aliceKey] = (await indexKeys(stores, "alice", "same")) as [string];
    const bobRebuilt = await answers(new Reader(withoutPersistedIndexes(stores)), "bob", "same");

    // Bob's own index is missing: his fresh reader reads only under his own prefix.
    const counted = counting(stores);
    const fresh = new Reader(counted.stores);
    expect(await answers(fresh, "bob", "same")).toEqual(bobRebuilt);
    expect(counted.read.gets.filter((key) => key.startsWith(`${PREFIXES.indexes}alice/`))).toEqual([]);
    await fresh.settled();

    // Alice's object put where bob's index is: its header names alice, so it is never served to bob.
    const bobHead = (await stores.meta.getHead("bob", "same"))!;
    const bobKey = keyOf(ownerOf(bobHead, bobHead.current), bobHead.current.length);
    expect(await indexKeys(stores, "bob", "same")).toEqual([bobKey]);
    await stores.blobs.put(bobKey, await stores.blobs.get(aliceKey));
    const again = counting(stores);
    const misled = new Reader(again.stores);
    const answered = await answers(misled, "bob", "same");
    expect(answered).toEqual(bobRebuilt);
    expect(JSON.stringify(answered)).not.toContain("alice turn");
    expect(again.read.records).toBe(N - 1);
  });

  it("keeps small sessions to their pages, and removes a session's indexes with it", async () => {
    const { stores } = pair();
    await append(stores, "carol", "small", "s", 0, 300);
    const reader = new Reader(stores);
    await reader.tree("carol", "small");
    await reader.settled();
    expect(await indexKeys(stores, "carol", "small")).toEqual([]);

    await append(stores, "carol", "large", "l", 0, N);
    await reader.tree("carol", "large");
    await reader.settled();
    expect(await indexKeys(stores, "carol", "large")).toHaveLength(1);
    await reader.delete("carol", "large");
    expect(await indexKeys(stores, "carol", "large")).toEqual([]);
  });
});
