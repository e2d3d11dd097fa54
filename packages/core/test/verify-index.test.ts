/**
 * Persisted tree indexes in the verify pass, on both store pairs: a deep pass with `repair`
 * writes a large session's missing or corrupt index from its pages (a fresh reader then reads
 * none of them); the sweep removes the ones no head can use and keeps the one readers use.
 */
import { randomUUID } from "node:crypto";
import { PREFIXES, persistedIndexKey, sessionIndexPrefix } from "@pisync/store";
import { countingPages, describeOnEveryStore } from "@pisync/testing";
import { expect, it } from "vitest";
import { Reader } from "../src/index.js";
import { decodeIndex, keyOf, ownerOf, PERSIST_MIN_LINES } from "../src/persisted-index.js";
import { verifyStores } from "../src/verify.js";
import { append } from "./large-session.js";

const N = PERSIST_MIN_LINES + 100;

const finding = (report: { findings: { kind: string; repaired: boolean; problem: boolean }[] }, kind: string) =>
  report.findings.filter((f) => f.kind === kind).map(({ repaired, problem }) => ({ repaired, problem }));

describeOnEveryStore("verify: persisted tree indexes", (pair) => {
  it("writes a large session's missing or corrupt index again from its pages with --repair", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    await append(stores, user, "s", "v", 0, N);
    await append(stores, user, "small", "v", 0, 50);
    const head = (await stores.meta.getHead(user, "s"))!;
    const key = keyOf(ownerOf(head, head.current), head.current.length);

    // Missing: a note (it costs time, it is not wrong), written by repair.
    const checked = await verifyStores(stores, { userId: user, deep: true });
    expect(finding(checked, "missing-index")).toEqual([{ repaired: false, problem: false }]);
    expect(checked.wrong).toBe(0);
    const repaired = await verifyStores(stores, { userId: user, deep: true, repair: true });
    expect(finding(repaired, "missing-index")).toEqual([{ repaired: true, problem: false }]);
    expect(await stores.blobs.list(sessionIndexPrefix(user, "s"))).toEqual([key]);
    expect(await stores.blobs.list(sessionIndexPrefix(user, "small"))).toEqual([]);
    const counted = countingPages(stores);
    await new Reader(counted.stores).tree(user, "s");
    expect(counted.read.records).toBe(0);

    // Corrupt: wrong, and written again by repair.
    await stores.blobs.put(key, new TextEncoder().encode("not an index"));
    const corrupt = await verifyStores(stores, { userId: user, deep: true });
    expect(finding(corrupt, "corrupt-index")).toEqual([{ repaired: false, problem: true }]);
    expect(corrupt.wrong).toBe(1);
    const fixed = await verifyStores(stores, { userId: user, deep: true, repair: true });
    expect(finding(fixed, "corrupt-index")).toEqual([{ repaired: true, problem: true }]);
    expect(fixed.wrong).toBe(0);
    expect(
      await decodeIndex(await stores.blobs.get(key), ownerOf(head, head.current), head.current.length),
    ).toBeDefined();
    const clean = await verifyStores(stores, { userId: user, deep: true });
    expect(clean.findings).toEqual([]);
  });

  it("sweeps the indexes no head can use, once old enough, and keeps the one readers use", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    await append(stores, user, "s", "w", 0, N);
    const reader = new Reader(stores);
    await reader.tree(user, "s");
    await reader.settled();
    const head = (await stores.meta.getHead(user, "s"))!;
    const created = Date.parse(head.createdAt);
    const used = keyOf(ownerOf(head, head.current), head.current.length);
    const body = await stores.blobs.get(used);
    const stale = [
      persistedIndexKey(user, "s", created, 1, 100), // replaced by the longer one
      persistedIndexKey(user, "s", created, 1, head.current.length + 10), // past the head
      persistedIndexKey(user, "s", created, 2, 100), // another generation
      persistedIndexKey(user, "s", created - 1000, 1, 100), // an earlier life of the session
      persistedIndexKey(user, "gone", created, 1, 100), // a session that is no more
    ];
    for (const key of stale) await stores.blobs.put(key, body);
    const listIndexes = async () => (await stores.blobs.list(`${PREFIXES.indexes}${user}/`)).sort();

    // Young: left (a reader may have just written it for a head newer than the one the sweep read).
    const young = await verifyStores(stores, { userId: user, repair: true });
    expect(young.findings).toEqual([]);
    expect(young.young).toBe(stale.length);
    const swept = await verifyStores(stores, { userId: user, repair: true, minAgeMs: 0 });
    expect(finding(swept, "stale-index")).toEqual(stale.map(() => ({ repaired: true, problem: false })));
    expect(await listIndexes()).toEqual([used]);
    const counted = countingPages(stores);
    await new Reader(counted.stores).tree(user, "s");
    expect(counted.read.records).toBe(0);
  });
});
