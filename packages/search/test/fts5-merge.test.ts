import { describe, expect, it } from "vitest";
import { decodeStructure, type Fts5Structure, mergeReads } from "../src/aws/fts5-merge.js";
import { loadWasmSqlite, WasmSqlite } from "../src/aws/wasm-sqlite.js";

const rowid = (segid: number, page: number) => segid * 2 ** 37 + page;

describe("FTS5's structure record", () => {
  it("decodes as FTS5 wrote it: every segment's first and last leaves are rows of `_data`", async () => {
    await loadWasmSqlite();
    const db = new WasmSqlite(":memory:");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(body)");
    let word = 1;
    // Many transactions, each its own level-0 segment, some merged as they come.
    for (let tx = 0; tx < 150; tx++) {
      db.exec("BEGIN");
      for (let r = 0; r < 20; r++) {
        const text = Array.from({ length: 40 }, () => `w${(word++ * 7919) % 5003}`).join(" ");
        db.prepare("INSERT INTO t (body) VALUES (?)").run(text);
      }
      db.exec("COMMIT");
    }
    const [row] = db.prepare("SELECT block FROM t_data WHERE id = 10").all() as Array<{ block: Uint8Array }>;
    const structure = decodeStructure(row?.block as Uint8Array);
    const segments = structure.levels.flatMap((level) => level.segments);
    expect(segments.length).toBeGreaterThan(1);
    expect(structure.writeCounter).toBeGreaterThanOrEqual(150);
    const exists = db.prepare("SELECT count(*) AS n FROM t_data WHERE id = ?");
    for (const segment of segments) {
      expect(segment.first).toBeLessThanOrEqual(segment.last);
      expect(exists.all(rowid(segment.segid, segment.first))).toEqual([{ n: 1 }]);
      expect(exists.all(rowid(segment.segid, segment.last))).toEqual([{ n: 1 }]);
      expect(exists.all(rowid(segment.segid, segment.last + 1))).toEqual([{ n: 0 }]);
    }
    db.close();
  });
});

describe("the leaves a merge reads next", () => {
  const level = (merging: number, ...sizes: number[]) => ({
    merging,
    segments: sizes.map((size, i) => ({ segid: merging * 100 + sizes.length * 10 + i + 1, first: 5, last: 4 + size })),
  });
  const structure = (writeCounter: number, ...levels: Fts5Structure["levels"]): Fts5Structure => ({
    writeCounter,
    levels,
  });

  it("are none unless the write counter passes a unit of 64 leaves", () => {
    const s = structure(100, level(0, 3), level(0, 1000, 1000, 1000, 1000));
    expect(mergeReads(s, 1, 10_000)).toEqual([]);
    expect(mergeReads({ ...s, writeCounter: 127 }, 1, 10_000).length).toBeGreaterThan(0);
    expect(mergeReads(s, 28, 10_000).length).toBeGreaterThan(0);
  });

  it("are the first leaves of a merge under way, in proportion to what is left of each input", () => {
    const s = structure(127, level(0, 2), level(2, 300, 100, 50), level(0, 9000));
    const reads = mergeReads(s, 1, 10_000);
    const [first, second, third] = s.levels[1]?.segments ?? [];
    const of = (segid?: number) => reads.filter((r) => r.segid === segid).map((r) => r.page);
    // 64 × 3 levels written, twice over: 384 leaves, 3:1 between the two inputs, each from its first leaf.
    expect(of(first?.segid)).toEqual(Array.from({ length: 289 }, (_, i) => 5 + i));
    expect(of(second?.segid)).toEqual(Array.from({ length: 97 }, (_, i) => 5 + i));
    expect(of(third?.segid)).toEqual([]);
    expect(mergeReads(s, 1, 50)).toHaveLength(50);
  });

  it("are of the level with the most segments when none is under way, if it has 4 at least", () => {
    const s = structure(63, level(0, 1, 1), level(0, 10, 10, 10, 10, 10));
    expect(new Set(mergeReads(s, 1, 10_000).map((r) => r.segid))).toEqual(
      new Set(s.levels[1]?.segments.map((x) => x.segid)),
    );
    expect(mergeReads(structure(63, level(0, 1, 1, 1), level(0, 10, 10)), 1, 10_000)).toEqual([]);
  });

  it("are all of a level that reaches 16 segments with the change's own, and of the next when it reaches 16 in turn", () => {
    const sixteen = structure(10, level(0, ...Array(15).fill(2)), level(0, ...Array(15).fill(3)), level(0, 50));
    const reads = mergeReads(sixteen, 1, 10_000);
    expect(reads).toHaveLength(15 * 2 + 15 * 3);
    expect(mergeReads(structure(10, level(0, ...Array(14).fill(2)), level(0, 50)), 1, 10_000)).toEqual([]);
  });
});
