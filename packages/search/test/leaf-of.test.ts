/**
 * Finding a row's leaf page from a table b-tree's interior pages (`leafOf`), on a real SQLite
 * file: the page it names must be a leaf that holds the row.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "@pisync/store/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { leafOf } from "../src/aws/hot-pages.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-leaf-of-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A varint and the byte after it. */
function varint(page: Uint8Array, at: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = page[at + i] as number;
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) return [value, at + i + 1];
  }
  return [value * 256 + (page[at + 8] as number), at + 9];
}

/** The rowids a table leaf page holds (each cell: its payload's length, then its rowid). */
function rowidsOn(n: number, page: Uint8Array): number[] {
  const h = n === 1 ? 100 : 0;
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
  expect(page[h]).toBe(13); // a table leaf
  return Array.from({ length: view.getUint16(h + 3) }, (_, i) => {
    const [, next] = varint(page, view.getUint16(h + 8 + 2 * i));
    return varint(page, next)[0];
  });
}

describe("leafOf", () => {
  it("names the leaf that holds each row, for small and large rowids, through several levels; or where it stops", () => {
    const path = join(dir, "rows.sqlite");
    const db = openSqlite(path);
    db.exec("CREATE TABLE small (id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE big (id INTEGER PRIMARY KEY, v BLOB)");
    const small = db.prepare("INSERT INTO small VALUES (?, ?)");
    const big = db.prepare("INSERT INTO big VALUES (?, ?)");
    db.transaction(() => {
      // Interleaved, as a search index's tables are written; ids as large as FTS5's segment rowids.
      for (let i = 1; i <= 150_000; i++) {
        small.run(i * 3, `row ${i}`);
        if (i % 4 === 0) big.run(1000 * 2 ** 37 + i, Buffer.alloc(300, i % 251));
      }
    })();
    const roots = new Map(
      (db.prepare("SELECT name, rootpage FROM sqlite_schema").all() as Array<{ name: string; rootpage: number }>).map(
        (row) => [row.name, row.rootpage],
      ),
    );
    const ids = {
      small: (db.prepare("SELECT id FROM small WHERE id % 641 = 0").pluck().all() as number[]).concat([3, 450_000]),
      big: db.prepare("SELECT id FROM big WHERE id % 37 = 0").pluck().all() as number[],
    };
    db.close();
    const file = readFileSync(path);
    const pageBytes = file.readUInt16BE(16);
    const page = (n: number) => new Uint8Array(file.buffer, file.byteOffset + (n - 1) * pageBytes, pageBytes);
    // Three levels at least: the root is interior, and so is its first child.
    const root = page(roots.get("small") as number);
    expect(root[0]).toBe(5);
    expect(page(new DataView(root.buffer, root.byteOffset).getUint32(root[0] === 5 ? 8 : 0))[0]).toBe(5);
    for (const [name, wanted] of Object.entries(ids)) {
      expect(wanted.length).toBeGreaterThan(100);
      for (const id of wanted) {
        const leaf = leafOf(roots.get(name) as number, id, page) as number;
        expect(rowidsOn(leaf, page(leaf))).toContain(id);
      }
    }
    // A page that is not here: the lookup stops there (a leaf, or an interior page above it).
    const smallRoot = roots.get("small") as number;
    expect(leafOf(smallRoot, 3, () => undefined)).toBe(smallRoot);
    const leaf = leafOf(smallRoot, 3, page) as number;
    expect(leafOf(smallRoot, 3, (n) => (n === leaf ? undefined : page(n)))).toBe(leaf);
  });
});
