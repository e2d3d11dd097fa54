/**
 * The pages every query of an index reads, whatever it searches for: SQLite's schema, the
 * interior pages of every b-tree (each lookup descends through them), each tree's leftmost leaf
 * (FTS5's structure and averages records are the smallest rowids of its `_data` table), and
 * every page of the small trees each term lookup reads (FTS5's `_idx` and `_config`).
 *
 * A compaction stores them as one object named by the manifest; a fresh reader fetches it with
 * the manifest's first chunk, in one parallel batch, so its first statement misses only leaf
 * pages instead of one round trip per level of each tree it descends. The pages are scattered
 * through the file, so a set of pages (not of 128 KiB chunks) keeps the object small.
 *
 * The object: a 4-byte big-endian count n, n 4-byte page numbers (1-based, ascending), then the
 * n pages' bytes in that order.
 */

/** Reads page `n` (1-based) of the file as it is now. */
export type PageReader = (n: number) => Promise<Uint8Array>;

/** A b-tree of the file: its root page, and whether its leaves are hot too (a small tree read by every lookup). */
export interface Tree {
  root: number;
  whole: boolean;
}

const INTERIOR_INDEX = 2;
const INTERIOR_TABLE = 5;
const isInterior = (type: number | undefined) => type === INTERIOR_INDEX || type === INTERIOR_TABLE;

/** Where a page's b-tree header starts (page 1 starts with the file's 100-byte header). */
const headerAt = (n: number) => (n === 1 ? 100 : 0);

/** The child pages of an interior b-tree page, left to right (each cell starts with its child's number). */
function childrenOf(n: number, page: Uint8Array): number[] {
  const h = headerAt(n);
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
  const cells = view.getUint16(h + 3);
  const children: number[] = [];
  for (let i = 0; i < cells; i++) children.push(view.getUint32(view.getUint16(h + 12 + 2 * i)));
  children.push(view.getUint32(h + 8));
  return children;
}

/**
 * The hot pages of `trees` (see the module's comment), ascending. Reads the interior pages and
 * one leaf per tree (the leftmost path tells the tree's height; the leaves below the last
 * interior level are not read unless the tree is `whole`).
 */
export async function hotPages(trees: readonly Tree[], read: PageReader): Promise<number[]> {
  const hot = new Set<number>();
  for (const { root, whole } of trees) {
    // The leftmost path: every leaf is at its depth.
    let height = 0;
    for (let n = root; ; height++) {
      const page = await read(n);
      hot.add(n);
      if (!isInterior(page[headerAt(n)])) break;
      n = childrenOf(n, page)[0] as number;
    }
    let level = [root];
    for (let depth = 0; depth < height; depth++) {
      const next: number[] = [];
      for (const n of level) next.push(...childrenOf(n, await read(n)));
      for (const n of level) hot.add(n);
      level = next;
    }
    if (whole) for (const n of level) hot.add(n);
  }
  return [...hot].sort((a, b) => a - b);
}

const LEAF_TABLE = 13;

/** A SQLite varint at `at` (at most 9 bytes; exact up to 2^53, which every rowid here is below). */
function varintAt(page: Uint8Array, at: number): number {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = page[at + i] as number;
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) return value;
  }
  return value * 256 + (page[at + 8] as number);
}

/**
 * The page (1-based) where a lookup of row `rowid` in the table b-tree rooted at `root` stops:
 * the leaf that holds it, or the first page on its path that is not here (`page` answers
 * `undefined`), which is the next one a statement reading the row would miss. It descends the
 * interior pages as SQLite does; with the hot pages here, a reader knows which pages a set of
 * rows needs without running a statement per row. `undefined` for a page that is not a table's.
 */
export function leafOf(root: number, rowid: number, page: (n: number) => Uint8Array | undefined): number | undefined {
  let n = root;
  for (let depth = 0; depth < 32; depth++) {
    const bytes = page(n);
    if (!bytes) return n;
    const h = headerAt(n);
    if (bytes[h] === LEAF_TABLE) return n;
    if (bytes[h] !== INTERIOR_TABLE) return undefined;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const cells = view.getUint16(h + 3);
    // The first cell whose key (its child's largest rowid) is at least `rowid`; past them all, the right child.
    let low = 0;
    let high = cells;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (varintAt(bytes, view.getUint16(h + 12 + 2 * mid) + 4) < rowid) low = mid + 1;
      else high = mid;
    }
    n = low < cells ? view.getUint32(view.getUint16(h + 12 + 2 * low)) : view.getUint32(h + 8);
  }
  return undefined;
}

/** The hot object for `pages` (ascending), their bytes read by `read`. */
export async function encodeHotPages(
  pages: readonly number[],
  pageBytes: number,
  read: PageReader,
): Promise<Uint8Array> {
  const head = 4 + 4 * pages.length;
  const body = new Uint8Array(head + pageBytes * pages.length);
  const view = new DataView(body.buffer);
  view.setUint32(0, pages.length);
  for (const [i, n] of pages.entries()) {
    view.setUint32(4 + 4 * i, n);
    body.set((await read(n)).subarray(0, pageBytes), head + pageBytes * i);
  }
  return body;
}

/** The pages of a hot object: page number → bytes. @throws when the object is not one of `pageBytes` pages */
export function decodeHotPages(body: Uint8Array, pageBytes: number): Map<number, Uint8Array> {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const count = body.length >= 4 ? view.getUint32(0) : -1;
  const head = 4 + 4 * count;
  if (count < 0 || body.length !== head + pageBytes * count) throw new Error("not an object of hot pages");
  const pages = new Map<number, Uint8Array>();
  for (let i = 0; i < count; i++) {
    pages.set(view.getUint32(4 + 4 * i), body.subarray(head + pageBytes * i, head + pageBytes * (i + 1)));
  }
  return pages;
}
