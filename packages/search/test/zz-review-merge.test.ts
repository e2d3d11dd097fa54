/**
 * Review of the merge (66b5b28): a writer folds scattered changes into patches, past 16 a merge
 * (by the writer or by a lazy copy of another "instance"); after each fold every kind of reader
 * must have the true file's bytes: a fresh lazy copy (hot objects, then chunk/patch ranges), a
 * fresh eager copy, a copy moved along base after base, the writer itself. The truth is a copy
 * with no base that applied the same statements.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Manifest } from "../src/aws/objects.js";
import { decodePages } from "../src/aws/objects.js";
import { Replica } from "../src/aws/replica.js";
import { loadWasmSqlite } from "../src/aws/wasm-sqlite.js";
import type { LineSource } from "../src/index.js";

const CHUNK = Number(process.env.ZZ_CHUNK ?? 12 * 1024);
const ITER = Number(process.env.ZZ_ITER ?? 56);
const sizes = { chunkBytes: CHUNK, eagerBytes: 0 };
const eager = { chunkBytes: CHUNK, eagerBytes: 1 << 30 };
const lines: LineSource = async (_u, _s, _g, ranges) => ranges.map(() => undefined);
const dir = mkdtempSync(join(tmpdir(), "zz-review-merge-"));
let blobs: BlobStore;
let n = 0;
const path = (name: string) => join(dir, `${name}-${++n}.sqlite`);

beforeAll(async () => {
  await loadWasmSqlite();
  blobs = awsStores(await testAwsConfig()).blobs;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

type Op = { name: string; sql: (d: Replica["driver"]) => void; vacuum?: boolean };

/** Where page `page` of `m` comes from. */
function whereFrom(m: Manifest, page: number): string {
  let from = "chunk";
  (m.patches ?? []).forEach((p, i) => {
    if (decodePages(p.pages).includes(page)) from = `patch ${i}`;
  });
  return `${from} (chunk ${Math.floor(((page - 1) * m.pageBytes) / m.chunkBytes)} of ${m.chunks.length}, length ${m.length}, chunked ${m.chunked})`;
}

function compare(label: string, copy: Replica, truth: Uint8Array, m: Manifest) {
  const bytes = copy.file.read(0, copy.file.length());
  expect(bytes.length, `${label}: length`).toBe(truth.length);
  const pb = m.pageBytes;
  for (let p = 0; p * pb < truth.length; p++) {
    const a = bytes.subarray(p * pb, (p + 1) * pb);
    const b = truth.subarray(p * pb, (p + 1) * pb);
    if (Buffer.compare(Buffer.from(a), Buffer.from(b)) !== 0) {
      throw new Error(`${label}: page ${p + 1} differs; it is from ${whereFrom(m, p + 1)}`);
    }
  }
}

describe("review: merge", () => {
  it("every reader reads the true bytes through patches and merges", async () => {
    const user = `zzmerge-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
    const random = rng(Number(process.env.ZZ_SEED ?? 7));
    const T = await Replica.open(blobs, lines, path("truth"), undefined, sizes);
    let W = await Replica.open(blobs, lines, path("w"), undefined, sizes);
    let maxId = 0;
    const init: Op = {
      name: "init",
      sql: (d) => {
        d.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER, pad BLOB)");
        for (let i = 1; i <= 1500; i++) d.prepare("INSERT INTO t VALUES (?, 0, ?)").run(i, new Uint8Array(500).fill(i % 251));
      },
    };
    const apply = async (r: Replica, op: Op) => {
      if (op.vacuum) {
        await r.materialize();
        r.driver.exec("VACUUM");
        return;
      }
      await r.run(() => r.transaction(async () => op.sql(r.driver)));
    };
    for (const r of [T, W]) await apply(r, init);
    maxId = 1500;
    W.seq = 1;
    const first = await W.compact(user);
    W.rebase({ key: first.key, manifest: first.manifest });
    let base = { key: first.key, seq: 1, manifest: first.manifest };
    let M = await Replica.open(blobs, lines, path("m"), base, sizes);
    let M2 = await Replica.open(blobs, lines, path("m2"), base, sizes);
    const kinds: string[] = [];
    let lazyMerges = 0;
    let mergeTurn = 0;
    for (let i = 0; i < ITER; i++) {
      const x = random();
      let op: Op;
      if (i === Number(process.env.ZZ_VAC ?? 40)) op = { name: "vacuum", sql: () => {}, vacuum: true };
      else if (x < 0.5) {
        const ids = Array.from({ length: 1 + Math.floor(random() * 5) }, () => 1 + Math.floor(random() * maxId));
        op = { name: `update ${ids}`, sql: (d) => ids.forEach((id) => d.prepare("UPDATE t SET v = v + 1 WHERE id = ?").run(id)) };
      } else if (x < 0.65) {
        const from = maxId + 1;
        const count = 10 + Math.floor(random() * 60);
        maxId += count;
        op = {
          name: `grow ${count}`,
          sql: (d) => {
            for (let id = from; id < from + count; id++) d.prepare("INSERT INTO t VALUES (?, 1, ?)").run(id, new Uint8Array(500).fill(id % 249));
          },
        };
      } else if (x < 0.8) {
        const id = maxId + 1;
        const big = 20_000 + Math.floor(random() * 40_000);
        op = {
          name: `hole ${big}`,
          sql: (d) => {
            d.prepare("INSERT INTO t VALUES (?, 2, ?)").run(id, new Uint8Array(big).fill(7));
            d.prepare("DELETE FROM t WHERE id = ?").run(id);
          },
        };
      } else if (x < 0.9) {
        const at = 1 + Math.floor(random() * maxId);
        op = { name: `delete ${at}`, sql: (d) => d.prepare("DELETE FROM t WHERE id BETWEEN ? AND ?").run(at, at + 25) };
      } else {
        // Many pages of a few chunks (a dense region), and one far away.
        const at = 1 + Math.floor(random() * (maxId - 100));
        const far = 1 + Math.floor(random() * maxId);
        op = {
          name: `dense ${at}`,
          sql: (d) => {
            d.prepare("UPDATE t SET v = v + 1 WHERE id BETWEEN ? AND ?").run(at, at + 60);
            d.prepare("UPDATE t SET v = v + 1 WHERE id = ?").run(far);
          },
        };
      }
      for (const r of [T, W]) await apply(r, op);
      const seq = W.seq + 1;
      const patches = W.base?.manifest.patches?.length ?? 0;
      let made: { key: string; manifest: Manifest; kind: string; uploaded: number };
      let est = 0;
      if (patches >= 16 && !op.vacuum && mergeTurn++ % 2 === 0) {
        // Another instance's lazy copy merges; the writer's copy is moved along to it.
        const L = await Replica.open(blobs, lines, path("l"), { key: base.key, seq: base.seq }, sizes);
        await apply(L, op);
        L.seq = seq;
        est = L.foldBytes();
        made = await L.compact(user);
        L.rebase({ key: made.key, manifest: made.manifest });
        await L.materialize();
        compare(`i=${i} ${op.name}: the lazy merger after rebase`, L, T.file.read(0, T.file.length()), made.manifest);
        L.close();
        lazyMerges++;
        W.seq = seq;
        expect(await W.moveTo({ key: made.key, seq }, lines, sizes)).toBe(true);
      } else {
        W.seq = seq;
        est = W.foldBytes();
        made = await W.compact(user);
        W.rebase({ key: made.key, manifest: made.manifest });
      }
      const changed = made.manifest.chunks.filter((k, j) => base.manifest.chunks[j] !== k).length;
      const keptPages = (made.manifest.patches ?? []).reduce((a, p) => a + decodePages(p.pages).length, 0);
      kinds.push(
        made.kind === "merge"
          ? `${i}:merge:${op.name.split(" ")[0]}:rewrote ${changed}/${made.manifest.chunks.length} (was ${base.manifest.chunks.length}, chunked ${base.manifest.chunked}, len ${base.manifest.length}->${made.manifest.length}) kept ${keptPages} hotsplit ${made.manifest.patches?.[0]?.hot ? "y" : "n"} est ${est} uploaded ${made.uploaded}`
          : `${i}:${made.kind}:${op.name.split(" ")[0]}:${made.manifest.patches?.length ?? 0}`,
      );
      base = { key: made.key, seq, manifest: made.manifest };
      const truth = T.file.read(0, T.file.length());
      const label = `i=${i} ${made.kind} after ${op.name}`;
      const F = await Replica.open(blobs, lines, path("f"), base, sizes);
      try {
        await F.materialize();
        compare(`${label}: fresh lazy`, F, truth, made.manifest);
      } finally {
        F.close();
      }
      const E = await Replica.open(blobs, lines, path("e"), base, eager);
      try {
        compare(`${label}: fresh eager`, E, truth, made.manifest);
      } finally {
        E.close();
      }
      if (!(await M.moveTo(base, lines, sizes))) {
        M.close();
        M = await Replica.open(blobs, lines, path("m"), base, sizes);
      }
      await M.materialize();
      compare(`${label}: moved along`, M, truth, made.manifest);
      if (!(await M2.moveTo(base, lines, sizes))) {
        M2.close();
        M2 = await Replica.open(blobs, lines, path("m2"), base, sizes);
      }
      for (let k = 0; k < 3; k++) {
        const id = 1 + Math.floor(random() * maxId);
        const q = "SELECT v, length(pad) AS l FROM t WHERE id = ?";
        expect(await M2.run(async () => M2.driver.prepare(q).all(id)), `${label}: partly read, row ${id}`).toEqual(
          T.driver.prepare(q).all(id),
        );
      }
      if (process.env.ZZ_WCHECK !== "0" && i % 5 === 4) {
        await W.materialize();
        compare(`${label}: the writer`, W, truth, made.manifest);
      }
    }
    await M2.materialize();
    compare("end: partly read copy", M2, T.file.read(0, T.file.length()), base.manifest);
    await W.materialize();
    compare("end: writer", W, T.file.read(0, T.file.length()), base.manifest);
    console.log(kinds.join(" "));
    expect(kinds.filter((k) => k.includes(":merge:")).length).toBeGreaterThanOrEqual(2);
    expect(lazyMerges).toBeGreaterThanOrEqual(1);
    for (const r of [T, W, M, M2]) r.close();
  }, 600_000);
});
