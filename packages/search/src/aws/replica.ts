/**
 * One user's index on this instance: a sparse copy of the base (chunks fetched as SQLite reads
 * them, `sparse-file.ts`) with the log's changes replayed on it, up to {@link Replica.seq}.
 * SQLite cannot wait for a fetch, so a statement that reads a missing chunk fails; {@link Replica.run}
 * fetches the chunk and runs the whole unit again (a transaction that failed is rolled back first).
 * A fresh instance's query thus fetches the chunks it touches, not the file.
 */
import { rmSync } from "node:fs";
import { type BlobStore, eachAtOnce, StorageUnavailableError } from "@pisync/store";
import { SqliteSearchIndex } from "../embedded.js";
import type { LineSource } from "../port.js";
import { Compactor } from "./compactor.js";
import { decodeStructure, mergeReads } from "./fts5-merge.js";
import { decodeHotPages, leafOf } from "./hot-pages.js";
import {
  FROM_CHUNK,
  fts5Tables,
  type Layout,
  layoutOf,
  NEW_FILE_PAGE_BYTES,
  quote,
  readSchema,
  type SchemaRow,
} from "./layout.js";
import { type Change, decodeChange, decodeManifest, decodePages, type Manifest, type Patch } from "./objects.js";
import type { LogEntry } from "./pointers.js";
import { SparseFile } from "./sparse-file.js";
import { WasmSqlite } from "./wasm-sqlite.js";

/** Chunks fetched at once. */
const PARALLEL_FETCHES = 8;
/** Leaves a query's {@link Replica.prefetch} looks up at most (about 64 MB of doclists). */
const MAX_PREFETCH_LEAVES = 16_384;
/** Chunks fetched after a missed one at most (8 MiB of 128 KiB chunks). */
const MAX_READ_AHEAD = 64;
/** FTS5's rowid of page `page` of segment `segid` in its `_data` table (`FTS5_SEGMENT_ROWID`: 31 bits of page, 5 of height, 1 of flag). */
const segmentRowid = (segid: number, page: number) => segid * 2 ** 37 + page;

/** A word a query looks up (folded as FTS5's tokenizer folds words), or a prefix of words. */
export interface PrefetchTerm {
  word: string;
  prefix: boolean;
}

/** A replayed change that did not apply as it did for its writer: this copy is not the writer's, and is dropped. */
export class DivergedError extends Error {}

/** The log's changes after `after`, each fetched now, all at once (a replay then waits for none in turn), by key. */
export function fetchChanges(
  blobs: BlobStore,
  entries: readonly LogEntry[],
  after: number,
): Map<string, Promise<Change>> {
  const changes = new Map<string, Promise<Change>>();
  for (const entry of entries) {
    if (entry.seq <= after) continue;
    const change = blobs.get(entry.key).then(decodeChange);
    change.catch(() => {}); // awaited by the replay, or dropped with the copy that failed first
    changes.set(entry.key, change);
  }
  return changes;
}

/** The object a block's bytes come from in a base (undefined: none, past its end). */
function objectOf(manifest: Manifest, layout: Layout, block: number): string | undefined {
  const from = layout.source[block];
  if (from === undefined) return undefined;
  if (from !== FROM_CHUNK) return manifest.patches?.[from]?.key;
  return manifest.chunks[Math.floor((block * manifest.pageBytes) / manifest.chunkBytes)];
}

/** The index of `value` in the ascending `list` (-1 when absent). */
function indexIn(list: readonly number[], value: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((list[mid] as number) < value) low = mid + 1;
    else high = mid;
  }
  return list[low] === value ? low : -1;
}

/** A user's index on this instance. */
export class Replica {
  /** Chunks fetched, in bytes (for the bench and the tests). */
  fetchedBytes = 0;
  /**
   * The size of the base's hot pages object, once fetched or uploaded here (a fold uploads it again).
   * @internal for the compactor
   */
  hotBytes = 0;

  /**
   * Where each block of the base is (its chunk or a patch).
   * @internal for the compactor
   */
  layout: Layout;

  private constructor(
    /** @internal for the compactor */
    readonly blobs: BlobStore,
    readonly file: SparseFile,
    /** The base this copy started from (undefined: an empty file). */
    public base: { key: string; manifest: Manifest } | undefined,
    /** The last change applied. */
    public seq: number,
    private readonly driverRef: { driver?: WasmSqlite; index?: SqliteSearchIndex },
  ) {
    this.layout = layoutOf(base?.manifest);
  }

  /**
   * A copy of the base `base` names (empty when none) at change `seq`: its manifest, then in
   * one parallel batch its first chunk (SQLite's header and schema) and its hot pages (the
   * pages every query reads, `hot-pages.ts`; unless `hot` is false), are fetched now, the rest
   * when read — or all of it now, in parallel, when the base is at most `eagerBytes` (a small
   * index costs one round trip, not one per chunk its first query touches).
   */
  static async open(
    blobs: BlobStore,
    lines: LineSource,
    path: string,
    base: { key: string; seq: number } | undefined,
    sizes: { chunkBytes: number; eagerBytes: number; hot?: boolean },
  ): Promise<Replica> {
    const { chunkBytes, eagerBytes } = sizes;
    const manifest = base ? decodeManifest(await blobs.get(base.key)) : undefined;
    const file = manifest
      ? new SparseFile(path, manifest.length, manifest.pageBytes, manifest.chunkBytes)
      : new SparseFile(path, 0, NEW_FILE_PAGE_BYTES, chunkBytes);
    const refs: { driver?: WasmSqlite; index?: SqliteSearchIndex } = {};
    const replica = new Replica(
      blobs,
      file,
      base && manifest ? { key: base.key, manifest } : undefined,
      base?.seq ?? 0,
      refs,
    );
    try {
      await replica.start(lines, eagerBytes, sizes.hot);
    } catch (error) {
      replica.close();
      throw error;
    }
    return replica;
  }

  /**
   * Fetches what a copy of its base needs first (all of a base of at most `eagerBytes`; else its
   * first chunk and hot pages, those not here yet), then opens SQLite on the file.
   */
  private async start(
    lines: LineSource,
    eagerBytes: number,
    hot: boolean | undefined,
    /** Hot objects whose pages are here already (a moved copy's: its old base named them too). */
    held: ReadonlySet<string> = new Set(),
  ): Promise<void> {
    const manifest = this.base?.manifest;
    if (manifest && manifest.length <= eagerBytes) {
      // Each patch whole, once, then the chunks (their pages no patch holds): not a range of each patch per chunk.
      await this.fetchPatches();
      await this.materialize();
    } else if (manifest && manifest.length > 0) {
      // The base's hot pages, and each patch's (a block is taken from the one that holds it last).
      const hotObjects: Array<[string, number]> = [];
      if (hot !== false && manifest.hot) hotObjects.push([manifest.hot, FROM_CHUNK]);
      for (const [i, patch] of (manifest.patches ?? []).entries()) {
        if (hot !== false && patch.hot) hotObjects.push([patch.hot, i]);
      }
      const wanted = hotObjects.filter(([key]) => !held.has(key));
      // All ended before a failure is thrown: no fetch of this copy outlives the operation.
      const fetched = await Promise.allSettled([
        this.file.has(0) ? undefined : this.fetch(0),
        ...wanted.map(([key, from]) => this.fetchHot(key, from)),
      ]);
      for (const outcome of fetched) if (outcome.status === "rejected") throw outcome.reason;
    }
    this.driverRef.driver = new WasmSqlite(this.file.path);
    this.driverRef.index = undefined;
    await this.run(async () => {
      this.driverRef.index ??= new SqliteSearchIndex(this.driverRef.driver as WasmSqlite, lines);
    });
  }

  /**
   * Makes this copy one of a newer base of the same index (another writer compacted the log),
   * keeping what it fetched that the new base still holds: a compaction uploads only the chunks
   * it changed, so a chunk named by both manifests is the same bytes, and a copy moved to the
   * new base fetches only what changed instead of starting over. Only for a copy the new base
   * includes (`base.seq` at or past {@link seq}), in chunks of the same size.
   * @returns false when it cannot be moved (the caller opens a new copy)
   */
  async moveTo(
    base: { key: string; seq: number },
    lines: LineSource,
    sizes: { eagerBytes: number; hot?: boolean },
  ): Promise<boolean> {
    const old = this.base?.manifest;
    if (!old || base.seq < this.seq) return false;
    const manifest = decodeManifest(await this.blobs.get(base.key));
    if (manifest.chunkBytes !== this.file.chunkBytes || manifest.pageBytes !== this.file.blockBytes) return false;
    this.driverRef.driver?.close();
    this.driverRef.driver = undefined;
    const dirty = new Set(this.file.dirtyBlocks);
    const [was, now] = [this.layout, layoutOf(manifest)];
    // A base folded at this copy's own change holds this copy's file (a replay does what its
    // writer did, page for page) unless either was vacuumed since: SQLite's header then differs
    // (its change counter at least). Every page here is then the new base's, whichever object
    // holds it now: a merge that rewrote the chunks this copy reads costs it nothing.
    const same =
      base.seq === this.seq && manifest.length === this.file.length() && (await this.sameHeader(manifest, now));
    // Else a block whose bytes come from the same object in both bases is the same bytes.
    this.file.rebase(manifest.length, (block) => {
      if (same) return true;
      const object = objectOf(manifest, now, block);
      return !dirty.has(block) && object !== undefined && object === objectOf(old, was, block);
    });
    this.base = { key: base.key, manifest };
    this.layout = now;
    this.seq = base.seq;
    // The old base's hot objects that the new one names too: their pages were fetched, and kept
    // where unchanged. The same file: every hot page is here (it was the old base's, or written here).
    const hotOf = (m: Manifest) => [m.hot, ...(m.patches ?? []).map((patch) => patch.hot)];
    const held = new Set(hotOf(same && old.hot ? manifest : old).filter((key) => key !== undefined));
    await this.start(lines, sizes.eagerBytes, sizes.hot, held);
    return true;
  }

  /** Whether page 1 (SQLite's header) of a base is this copy's, byte for byte (one ranged GET). */
  private async sameHeader(manifest: Manifest, layout: Layout): Promise<boolean> {
    const pageBytes = manifest.pageBytes;
    if (pageBytes !== this.file.blockBytes || !this.file.hasBlock(0) || this.file.length() < pageBytes) return false;
    const from = layout.source[0];
    let theirs: Uint8Array;
    if (from === undefined) return false;
    if (from === FROM_CHUNK) {
      const key = manifest.chunks[0];
      if (key === undefined) return false;
      theirs = await this.blobs.get(key, { start: 0, end: pageBytes });
    } else {
      const patch = manifest.patches?.[from] as Patch;
      const list = layout.pages[from] as number[];
      const at = indexIn(list, 1);
      theirs = await this.blobs.get(patch.key, patchRange(list.length, at, at, pageBytes));
    }
    return Buffer.from(theirs).equals(this.file.read(0, pageBytes));
  }

  get driver(): WasmSqlite {
    return this.driverRef.driver as WasmSqlite;
  }

  get index(): SqliteSearchIndex {
    return this.driverRef.index as SqliteSearchIndex;
  }

  /**
   * Runs `fn` until it reads no missing chunk: each miss fetches its chunk and starts `fn` again.
   * The n-th miss of one run also fetches the n − 1 missing chunks after it, in parallel (a
   * broad query, which touches much of the file, starts again about √(2·chunks) times, not once
   * per chunk; a narrow one fetches little more than it reads).
   */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    for (let misses = 1; ; misses++) {
      this.file.take();
      try {
        return await fn();
      } catch (error) {
        const chunk = this.file.take();
        if (chunk === undefined) throw error;
        this.driverRef.driver?.rollbackAll();
        await this.fetchAll([chunk, ...this.absentAfter(chunk, Math.min(misses - 1, MAX_READ_AHEAD))]);
      }
    }
  }

  /** The chunks of the base's length (past its chunk objects' end, a chunk's pages are all patches'). */
  private chunkCount(): number {
    const manifest = this.base?.manifest;
    return manifest ? Math.ceil(manifest.length / manifest.chunkBytes) : 0;
  }

  /** The chunk that holds block `block` (0-based). */
  private chunkOf(block: number): number {
    return Math.floor((block * this.file.blockBytes) / this.file.chunkBytes);
  }

  /** Up to `count` chunks of the base after `chunk` (wrapping around) that are not here yet. */
  private absentAfter(chunk: number, count: number): number[] {
    const chunks = this.chunkCount();
    const found: number[] = [];
    for (let i = 1; i < chunks && found.length < count; i++) {
      const next = (chunk + i) % chunks;
      if (!this.file.has(next)) found.push(next);
    }
    return found;
  }

  /** Fetches chunks, {@link PARALLEL_FETCHES} at a time. */
  private async fetchAll(wanted: readonly number[]): Promise<void> {
    await eachAtOnce(wanted, PARALLEL_FETCHES, (chunk) => this.fetch(chunk));
  }

  /**
   * Applies the log's entries after {@link seq} (each in its own transaction), their objects
   * taken from `fetched` ({@link fetchChanges}, started before the copy was opened) or fetched
   * all at once now; with `until`, none begun past that time (the copy stays at the last one
   * applied). @throws DivergedError
   */
  async replay(
    entries: readonly LogEntry[],
    fetched = fetchChanges(this.blobs, entries, this.seq),
    until?: number,
  ): Promise<void> {
    for (const entry of entries) {
      if (entry.seq <= this.seq) continue;
      if (until !== undefined && Date.now() >= until) return;
      if (entry.seq !== this.seq + 1) throw new DivergedError(`change ${entry.seq} follows ${this.seq}`);
      const change = await (fetched.get(entry.key) ?? this.blobs.get(entry.key).then(decodeChange));
      await this.fetchReads(change.reads);
      await this.run(() => this.transaction(() => this.apply(change)));
      this.seq = entry.seq;
    }
  }

  /**
   * Fetches at once the chunks of the pages a change's writer read (`reads`, see {@link Change})
   * that are not here: its replay then reads them all here, where each would have been a miss,
   * a fetch and the whole change run again. A hint: a list this code cannot read is left alone.
   */
  private async fetchReads(reads: string | undefined): Promise<void> {
    if (reads === undefined || !this.base) return;
    let pages: number[];
    try {
      pages = decodePages(reads);
    } catch {
      return;
    }
    const chunks = this.chunkCount();
    const wanted = new Set<number>();
    for (const page of pages) {
      if (this.file.hasBlock(page - 1)) continue;
      const chunk = this.chunkOf(page - 1);
      if (chunk < chunks) wanted.add(chunk);
    }
    await this.fetchAll([...wanted]);
  }

  /**
   * Fetches at once, in parallel, the leaves that hold the doclists of `terms` (words folded as
   * FTS5's tokenizer folds them; a prefix stands for every word it starts) in each segment,
   * before a query that reads them one after another (a round trip per miss). A hint only: the
   * query still fetches what it misses.
   *
   * FTS5's `_idx` (hot: fetched with the first chunk) names, per segment, the first term of each
   * leaf that starts one: a term's doclist runs from the leaf of the last entry at or before it
   * to the leaf of the first entry past it (the leaves between hold only doclist, no term).
   * Ranking reads every doclist whole (bm25 counts the entries of each term) and a prefix's
   * completions are counted from theirs, so the whole run is wanted. The chunks of those leaves
   * are found from `_data`'s interior pages (hot), as {@link prefetchRows} finds rows; at most
   * {@link MAX_PREFETCH_LEAVES} leaves are looked up.
   */
  async prefetch(terms: readonly PrefetchTerm[]): Promise<void> {
    if (!this.base || terms.length === 0) return;
    const schema = await this.run(async () => this.schema());
    const rowids = new Map<string, number[]>();
    for (const name of fts5Tables(schema)) {
      const idx = quote(`${name}_idx`);
      const lookup = `SELECT s.segid AS segid,
          (SELECT i.pgno FROM ${idx} i WHERE i.segid = s.segid AND i.term <= @from ORDER BY i.term DESC LIMIT 1) AS first,
          (SELECT i.pgno FROM ${idx} i WHERE i.segid = s.segid AND i.term > @to ORDER BY i.term LIMIT 1) AS next
        FROM (SELECT DISTINCT segid FROM ${idx}) s`;
      const found: number[] = [];
      for (const term of terms) {
        // A term's key in FTS5's index: '0' (the main index) then the word's UTF-8; a prefix
        // runs to the last key that starts with it (0xff follows every byte of UTF-8).
        const from = new TextEncoder().encode(`0${term.word}`);
        const to = term.prefix ? Uint8Array.from([...from, 0xff]) : from;
        const pages = await this.run(
          async () =>
            this.driver.prepare(lookup).all({ from, to }) as Array<{
              segid: number;
              first: number | null;
              next: number | null;
            }>,
        );
        for (const { segid, first, next } of pages) {
          // `pgno` holds the page number times two (its low bit flags a doclist index).
          const start = first === null ? 1 : Math.floor(first / 2);
          const end = next === null ? start : Math.max(start, Math.floor(next / 2));
          for (let page = start; page <= end && found.length < MAX_PREFETCH_LEAVES; page++) {
            found.push(segmentRowid(segid, page));
          }
        }
      }
      rowids.set(name, found);
    }
    const wanted = new Set<number>();
    for (const [name, ids] of rowids) {
      const root = schema.find((row) => row.name === `${name}_data`)?.rootpage;
      if (root) for (const chunk of this.leafChunks(root, ids)) wanted.add(chunk);
    }
    await this.fetchAll([...wanted]);
  }

  /**
   * Fetches at once the leaves FTS5's incremental merge will read when a change writing about
   * `leaves` new leaves passes its next unit of work (`fts5-merge.ts`): on a copy read lazily,
   * such a change (one append in 64) otherwise misses them one at a time, the whole change run
   * again at each. A hint, as {@link prefetch}: nothing when no merge work is due or the copy
   * is whole.
   */
  async prefetchMerge(leaves: number): Promise<void> {
    if (!this.base || this.file.complete()) return;
    const schema = await this.run(async () => this.schema());
    const wanted = new Set<number>();
    for (const name of fts5Tables(schema)) {
      const data = `${name}_data`;
      const root = schema.find((row) => row.name === data)?.rootpage;
      const rows = await this.run(
        async () =>
          this.driver.prepare(`SELECT block FROM ${quote(data)} WHERE id = 10`).all() as Array<{ block: Uint8Array }>,
      );
      const record = rows[0]?.block;
      if (!root || !(record instanceof Uint8Array)) continue;
      let reads: Array<{ segid: number; page: number }>;
      try {
        reads = mergeReads(decodeStructure(record), leaves, MAX_PREFETCH_LEAVES);
      } catch {
        continue; // a record this code cannot read: the change fetches what it misses
      }
      const ids = reads.map(({ segid, page }) => segmentRowid(segid, page));
      for (const chunk of this.leafChunks(root, ids)) wanted.add(chunk);
    }
    await this.fetchAll([...wanted]);
  }

  /**
   * Fetches at once the chunks that hold rows `ids` (by rowid) of each of `tables`, found from
   * the tables' interior pages (hot, so here) without running a statement per row. A hint, as
   * {@link prefetch}: a row whose path is not here is left for the query to miss.
   */
  async prefetchRows(tables: readonly string[], ids: readonly number[]): Promise<void> {
    const schema = await this.run(async () => this.schema());
    const wanted = new Set<number>();
    for (const table of tables) {
      const root = schema.find((row) => row.name === table)?.rootpage;
      if (root) for (const chunk of this.leafChunks(root, ids)) wanted.add(chunk);
    }
    await this.fetchAll([...wanted]);
  }

  /** The chunks a read of rows `ids` of the table b-tree at `root` needs next: their leaves' (the hot pages here). */
  private leafChunks(root: number, ids: Iterable<number>): Set<number> {
    const pageBytes = this.file.blockBytes;
    const pages = new Map<number, Uint8Array | undefined>();
    const page = (n: number) => {
      if (!pages.has(n)) {
        pages.set(n, this.file.hasBlock(n - 1) ? this.file.read((n - 1) * pageBytes, n * pageBytes) : undefined);
      }
      return pages.get(n);
    };
    const wanted = new Set<number>();
    for (const id of ids) {
      const leaf = leafOf(root, id, page);
      if (leaf !== undefined && !this.file.hasBlock(leaf - 1)) {
        wanted.add(this.chunkOf(leaf - 1));
      }
    }
    return wanted;
  }

  /** Runs `fn` in a transaction: committed when it returns, rolled back when it throws. */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    this.driver.begin();
    try {
      const result = await fn();
      this.driver.commit();
      return result;
    } catch (error) {
      this.driver.rollbackAll();
      throw error;
    }
  }

  /** Does a logged change to this copy. @throws DivergedError when it does not apply as it did for its writer */
  async apply(change: Change): Promise<void> {
    if ("remove" in change) {
      await this.index.remove(change.remove.userId, change.remove.sessionId);
      return;
    }
    const applied = await this.index.applyAll(change.apply);
    if (applied.some((ok) => !ok)) throw new DivergedError("a logged batch did not apply");
  }

  /** About the bytes {@link compact} would upload now, and fetch first for a merge (for a pass's estimate of its time). */
  foldBytes(): number {
    return new Compactor(this).foldBytes();
  }

  /**
   * Makes the new base of change {@link seq} from this copy (`compactor.ts`) and uploads it with a
   * manifest naming it. The copy is not changed; {@link rebase} adopts the result once the pointer names it.
   */
  compact(
    userId: string,
  ): Promise<{ key: string; manifest: Manifest; uploaded: number; kind: "patch" | "merge" | "chunks" }> {
    return new Compactor(this).compact(userId);
  }

  /** The file's tables and indexes. */
  private schema(): SchemaRow[] {
    return readSchema(this.driver);
  }

  /**
   * Fetches a hot pages object (a fresh copy's first batch: the base's, `from` {@link FROM_CHUNK},
   * or patch `from`'s) and puts in the file the pages it holds last.
   */
  private async fetchHot(key: string, from: number): Promise<void> {
    const generation = this.file.generation;
    const { source } = this.layout;
    const body = await this.blobs.get(key);
    this.fetchedBytes += body.length;
    if (from === FROM_CHUNK) this.hotBytes = body.length;
    const pageBytes = this.file.blockBytes;
    const pages = decodeHotPages(body, pageBytes);
    this.file.fillBlocks(
      new Map([...pages].map(([n, bytes]) => [n - 1, bytes])),
      generation,
      (block) => source[block] === from,
    );
  }

  /**
   * Fetches every patch of the base (or those of `only`, by index) whole, a few at a time, and puts in the file the pages each holds last.
   * @internal for the compactor
   */
  async fetchPatches(only?: ReadonlySet<number>): Promise<void> {
    const manifest = this.base?.manifest;
    const { source } = this.layout;
    const generation = this.file.generation;
    const wanted = [...(manifest?.patches ?? []).entries()].filter(([from]) => !only || only.has(from));
    await eachAtOnce(wanted, PARALLEL_FETCHES, async ([from, patch]) => {
      const body = await this.blobs.get(patch.key);
      this.fetchedBytes += body.length;
      const pages = decodeHotPages(body, this.file.blockBytes);
      this.file.fillBlocks(
        new Map([...pages].map(([n, bytes]) => [n - 1, bytes])),
        generation,
        (block) => source[block] === from,
      );
    });
  }

  /** Fetches every chunk not here yet, a few at a time (a small base whole; before a VACUUM, which reads every page). */
  async materialize(): Promise<void> {
    const chunks = this.chunkCount();
    await this.fetchAll(Array.from({ length: chunks }, (_, chunk) => chunk).filter((chunk) => !this.file.has(chunk)));
  }

  /** Takes a base {@link compact} made from this copy as its own: nothing is dirty against it. */
  rebase(base: { key: string; manifest: Manifest }): void {
    this.base = base;
    this.layout = layoutOf(base.manifest);
    this.file.dirty.clear();
    this.file.dirtyBlocks.clear();
  }

  /** Bytes of the index held on local disk (about). */
  localBytes(): number {
    return this.file.presentBytes();
  }

  close(): void {
    this.driverRef.driver?.close();
    this.file.close();
    rmSync(this.file.path, { force: true });
    rmSync(`${this.file.path}-journal`, { force: true });
  }

  /**
   * Fetches the blocks of `chunk` that are not here, at once: from its chunk object those it
   * holds, and from each patch that holds some last, the range of its pages in this chunk.
   * @internal for the compactor
   */
  async fetch(chunk: number): Promise<void> {
    const manifest = this.base?.manifest;
    if (!manifest) throw new Error(`chunk ${chunk} is past the base`);
    const { source, pages } = this.layout;
    const perChunk = manifest.chunkBytes / manifest.pageBytes;
    const first = chunk * perChunk;
    const end = Math.min(source.length, first + perChunk);
    let fromChunk = false;
    /** The bytes of the chunk object the blocks wanted from it span: an answer shorter was cut. */
    let chunkNeeds = 0;
    /** Per patch, the places in its object of the first and the last block wanted. */
    const ranges = new Map<number, [number, number]>();
    for (let block = first; block < end; block++) {
      if (this.file.hasBlock(block)) continue;
      const from = source[block] as number;
      if (from === FROM_CHUNK) {
        fromChunk = true;
        chunkNeeds = (block + 1) * manifest.pageBytes - chunk * manifest.chunkBytes;
        continue;
      }
      const at = indexIn(pages[from] as number[], block + 1);
      const range = ranges.get(from);
      ranges.set(from, range ? [range[0], at] : [at, at]);
    }
    const key = manifest.chunks[chunk];
    if (fromChunk && key === undefined) throw new Error(`chunk ${chunk} is past the base`);
    const generation = this.file.generation; // nothing is put in a copy that moved to another base meanwhile
    const gets: Array<Promise<void>> = [];
    if (fromChunk && key !== undefined) {
      gets.push(
        this.blobs.get(key).then((bytes) => {
          this.fetchedBytes += bytes.length;
          cutShort(key, bytes.length, chunkNeeds);
          this.file.fill(chunk, bytes, generation, (block) => source[block] === FROM_CHUNK);
        }),
      );
    }
    for (const [from, [low, high]] of ranges) {
      const patch = manifest.patches?.[from] as Patch;
      const list = pages[from] as number[];
      const range = patchRange(list.length, low, high, manifest.pageBytes);
      gets.push(
        this.blobs.get(patch.key, range).then((bytes) => {
          this.fetchedBytes += bytes.length;
          cutShort(patch.key, bytes.length, range.end - range.start);
          const blocks = new Map<number, Uint8Array>();
          for (let i = low; i <= high; i++) {
            const at = (i - low) * manifest.pageBytes;
            blocks.set((list[i] as number) - 1, bytes.subarray(at, at + manifest.pageBytes));
          }
          this.file.fillBlocks(blocks, generation, (block) => source[block] === from);
        }),
      );
    }
    const outcomes = await Promise.allSettled(gets);
    for (const outcome of outcomes) if (outcome.status === "rejected") throw outcome.reason;
  }
}

/**
 * @throws StorageUnavailableError when an answer holds fewer bytes than the pages asked of it (a
 * cut answer): a part of a page, kept, would be a corrupt page, and a fold would upload it.
 */
function cutShort(key: string, got: number, wanted: number): void {
  if (got < wanted) throw new StorageUnavailableError(`${key} answered ${got} of the ${wanted} bytes asked`);
}

/** Bytes of the pages at places `low`..`high` of a patch object of `count` pages (the hot pages' layout: a count, the page numbers, the pages). */
function patchRange(count: number, low: number, high: number, pageBytes: number): { start: number; end: number } {
  const head = 4 + 4 * count;
  return { start: head + low * pageBytes, end: head + (high + 1) * pageBytes };
}
