/**
 * A sparse copy of an index moved to a newer base (`Replica.moveTo`), against s3rver: what it
 * keeps must be the new base's bytes, whatever was still in flight or truncated locally.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BlobStore, StorageUnavailableError } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodePages } from "../src/aws/objects.js";
import { Replica } from "../src/aws/replica.js";
import { loadWasmSqlite } from "../src/aws/wasm-sqlite.js";
import type { LineSource } from "../src/index.js";

const sizes = { chunkBytes: 16 * 1024, eagerBytes: 0 };
const lines: LineSource = async (_u, _s, _g, ranges) => ranges.map(() => undefined);
const dir = mkdtempSync(join(tmpdir(), "pisync-replica-"));
let blobs: BlobStore;
/** GETs of these keys wait until released. */
const held = new Map<string, Promise<void>>();
/** While above 0, every answer loses this many bytes at its end (a cut answer). */
let cut = 0;
let user = 0;

beforeAll(async () => {
  await loadWasmSqlite();
  const stores = awsStores(await testAwsConfig());
  const real = stores.blobs;
  blobs = {
    put: (key, body) => real.put(key, body),
    get: async (key, range) => {
      const bytes = await real.get(key, range);
      await held.get(key);
      return cut > 0 ? bytes.subarray(0, Math.max(0, bytes.length - cut)) : bytes;
    },
    delete: (keys) => real.delete(keys),
    list: (prefix) => real.list(prefix),
    listObjects: (prefix) => real.listObjects(prefix),
    uploadUrl: (key, expires, max) => real.uploadUrl(key, expires, max),
  };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A writer's copy of a table of 3,000 rows of 500 bytes, compacted into a first base. */
async function writer(name: string, remove?: [number, number]) {
  const w = await Replica.open(blobs, lines, join(dir, `${name}-w.sqlite`), undefined, sizes);
  w.driver.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER, pad BLOB)");
  w.driver.exec("BEGIN");
  for (let i = 1; i <= 3000; i++) w.driver.prepare("INSERT INTO t VALUES (?, 0, ?)").run(i, new Uint8Array(500));
  w.driver.exec("COMMIT");
  if (remove) w.driver.prepare("DELETE FROM t WHERE id BETWEEN ? AND ?").run(...remove);
  const userId = `replica-${++user}-${Date.now()}`;
  const first = await w.compact(userId);
  w.rebase({ key: first.key, manifest: first.manifest });
  /** Changes row `id` to `v` and compacts into the next base. */
  const next = async (id: number, v: number) => {
    w.driver.prepare("UPDATE t SET v = ? WHERE id = ?").run(v, id);
    w.seq += 1;
    const made = await w.compact(userId);
    w.rebase({ key: made.key, manifest: made.manifest });
    return { key: made.key, seq: w.seq, manifest: made.manifest };
  };
  return { w, first, next, userId };
}

const rowValue = (copy: Replica, id: number) =>
  copy.run(async () => (copy.driver.prepare("SELECT v FROM t WHERE id = ?").all(id)[0] as { v: number }).v);

/** One change (rows 1–2000 set to 5) done on each copy, as a replay does it: both are then at change 1. */
async function sameChange(...copies: Replica[]) {
  for (const r of copies) {
    await r.run(() => r.transaction(async () => r.driver.prepare("UPDATE t SET v = 5 WHERE id <= 2000").run()));
    r.seq = 1;
  }
}

const integrity = (copy: Replica) => copy.run(async () => copy.driver.prepare("PRAGMA integrity_check").all());

describe("a copy moved to a newer base", () => {
  it("keeps none of the old base's bytes from a fetch that lands after the move", async () => {
    const { w, first, next } = await writer("late");
    const copy = await Replica.open(blobs, lines, join(dir, "late-x.sqlite"), { key: first.key, seq: 0 }, sizes);
    try {
      const second = await next(2500, 42);
      // A fetch of the row's old chunk is still on its way (a batch that failed elsewhere, say) when the copy moves.
      // The row's leaf is the last page of the patch (the other is the file's header, page 1).
      const patch = second.manifest.patches?.at(-1);
      const leaf = Math.max(...decodePages(patch?.pages ?? ""));
      const chunk = Math.floor(((leaf - 1) * first.manifest.pageBytes) / first.manifest.chunkBytes);
      expect(chunk).toBeGreaterThan(0);
      let release = () => {};
      held.set(first.manifest.chunks[chunk] as string, new Promise<void>((resolve) => (release = resolve)));
      const late = copy.prefetchRows(["t"], [2500]);
      expect(await copy.moveTo({ key: second.key, seq: second.seq }, lines, sizes)).toBe(true);
      release();
      await late;
      expect(await rowValue(copy, 2500)).toBe(42);
      expect(await rowValue(w, 2500)).toBe(42);
    } finally {
      held.clear();
      copy.close();
      w.close();
    }
  });

  it("keeps every page it holds when the new base was folded at its own change: none it wrote is fetched again", async () => {
    const { w, first, userId } = await writer("same");
    const copy = await Replica.open(blobs, lines, join(dir, "same-x.sqlite"), { key: first.key, seq: 0 }, sizes);
    try {
      await copy.materialize();
      // One change done on both (as a replay does it), folded by the writer.
      await sameChange(w, copy);
      const made = await w.compact(userId);
      expect(made.kind).toBe("patch"); // the pages the copy wrote are the patch's now, not the old base's
      const fetched = copy.fetchedBytes;
      expect(await copy.moveTo({ key: made.key, seq: 1 }, lines, sizes)).toBe(true);
      expect(copy.file.complete()).toBe(true);
      expect(copy.fetchedBytes).toBe(fetched);
      expect(await rowValue(copy, 1500)).toBe(5);
      expect(await rowValue(copy, 2500)).toBe(0);
      expect(await integrity(copy)).toEqual([{ integrity_check: "ok" }]);
    } finally {
      copy.close();
      w.close();
    }
  });

  it("keeps only what both bases name when its file is not the base's at the same change (SQLite's header differs)", async () => {
    const { w, first, userId } = await writer("header");
    const copy = await Replica.open(blobs, lines, join(dir, "header-x.sqlite"), { key: first.key, seq: 0 }, sizes);
    try {
      await copy.materialize();
      // A write here that no change logged (as a VACUUM whose fold lost to another writer's): same length, other bytes.
      copy.driver.exec("PRAGMA user_version = 7");
      await sameChange(w, copy);
      const made = await w.compact(userId);
      expect(copy.file.length()).toBe(made.manifest.length);
      expect(await copy.moveTo({ key: made.key, seq: 1 }, lines, sizes)).toBe(true);
      expect(copy.file.complete()).toBe(false);
      const version = await copy.run(async () => copy.driver.prepare("PRAGMA user_version").all());
      expect(version).toEqual([{ user_version: 0 }]);
      expect(await rowValue(copy, 1500)).toBe(5);
    } finally {
      copy.close();
      w.close();
    }
  });

  it("keeps nothing past the end of a copy a VACUUM shortened", async () => {
    const { w, first, next } = await writer("vacuum", [200, 1800]);
    const copy = await Replica.open(blobs, lines, join(dir, "vacuum-x.sqlite"), { key: first.key, seq: 0 }, sizes);
    try {
      // Vacuumed here, its compaction not published (it lost to the other writer's, say): the copy is kept.
      await copy.materialize();
      copy.driver.exec("VACUUM");
      expect(copy.file.length()).toBeLessThan(first.manifest.length);
      const second = await next(1, 7);
      expect(await copy.moveTo({ key: second.key, seq: second.seq }, lines, sizes)).toBe(true);
      expect(await rowValue(copy, 1)).toBe(7);
      const count = await copy.run(async () => copy.driver.prepare("SELECT count(*) AS n FROM t").all()[0]);
      expect(count).toEqual({ n: 1399 });
      expect(await integrity(copy)).toEqual([{ integrity_check: "ok" }]);
    } finally {
      copy.close();
      w.close();
    }
  });
});

describe("a copy given a cut answer", () => {
  it("refuses a chunk or a patch's pages cut short (503), keeping no part of a page, and reads them whole later", async () => {
    const { w, next } = await writer("cut");
    const second = await next(2500, 42); // row 2500's leaf is in the patch, row 10's in a chunk
    const copy = await Replica.open(
      blobs,
      lines,
      join(dir, "cut-x.sqlite"),
      { key: second.key, seq: second.seq },
      sizes,
    );
    try {
      cut = 100;
      await expect(rowValue(copy, 2500)).rejects.toThrow(StorageUnavailableError);
      await expect(rowValue(copy, 10)).rejects.toThrow(StorageUnavailableError);
      cut = 0;
      expect(await rowValue(copy, 2500)).toBe(42);
      expect(await rowValue(copy, 10)).toBe(0);
      await copy.materialize();
      expect(await integrity(copy)).toEqual([{ integrity_check: "ok" }]);
    } finally {
      cut = 0;
      copy.close();
      w.close();
    }
  });
});
