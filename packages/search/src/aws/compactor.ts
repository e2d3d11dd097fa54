/**
 * The writer of a replica's next base: from a copy at change `seq`, a patch of the pages written
 * since its base, a merge of the base's patches, or whole chunks; each uploaded with its hot pages
 * and a manifest naming them. The reader (`replica.ts`) only fetches and replays; this only writes.
 */
import { type BlobStore, eachAtOnce } from "@pisync/store";
import { encodeHotPages, hotPages, type PageReader, type Tree } from "./hot-pages.js";
import { FROM_CHUNK, fts5Tables, type Layout, NEW_FILE_PAGE_BYTES, quote, readSchema } from "./layout.js";
import { type MergePlan, planMerge } from "./merge-plan.js";
import { chunkKey, encodeManifest, encodePages, type Manifest, manifestKey, type Patch } from "./objects.js";
import type { SparseFile } from "./sparse-file.js";
import type { WasmSqlite } from "./wasm-sqlite.js";

/** Chunks a compaction uploads at once. */
const PARALLEL_UPLOADS = 8;
/**
 * Patches a base has at most, and their bytes at most: the compaction past either merges them
 * ({@link Compactor.compact}; a chunk read fetches one range of each patch that holds its pages).
 */
const MAX_PATCHES = 16;
const MAX_PATCH_BYTES = 64 * 1024 * 1024;
/** A merge rewrites a chunk at least this share of whose pages are patched (`merge-plan.ts`). */
const MERGE_DENSE_SHARE = 0.5;
/** The pages a merge keeps in its one patch, in bytes at most: 16 MiB, and an eighth of the file. */
const MAX_MERGED_BYTES = 16 * 1024 * 1024;
const MAX_MERGED_SHARE = 1 / 8;
/**
 * A fold whose pages fill at least this share of the chunks they are in (a rebuild's new
 * segments, in a row) rewrites those chunks when the base has no patch: a patch would save
 * little, and the chunk rewrite that retires patches later would gather several folds' chunks.
 */
const DENSE_SHARE = 0.25;
/** ...and that wrote at least this much (a few small appends' pages stay a patch, on any base). */
const DENSE_MIN_BYTES = 4 * 1024 * 1024;

/** Trees whose every page is hot, by name: FTS5's `_idx` (read by each term lookup of each segment) and `_config`. */
const WHOLE_TREE = /_(idx|config)$/;
/** FTS5's records every query reads first: the averages (rowid 1) and the structure (rowid 10), with their overflow pages. */
const FTS5_RECORDS = "id IN (1, 10)";

/** What a compaction reads of a copy (`Replica`): its file, base and layout, and its fetches. */
export interface Compactable {
  readonly blobs: BlobStore;
  readonly file: SparseFile;
  /** The base the copy started from (undefined: an empty file). */
  readonly base: { key: string; manifest: Manifest } | undefined;
  /** The last change applied. */
  readonly seq: number;
  /** Where each block of the base is. */
  readonly layout: Layout;
  /** The size of the base's hot pages object (a compaction that uploads one sets it). */
  hotBytes: number;
  readonly driver: WasmSqlite;
  /** Runs `fn` until it reads no missing chunk. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Fetches the blocks of chunk `chunk` that are not here. */
  fetch(chunk: number): Promise<void>;
  /** Fetches the base's patches (or those of `only`, by index) whole. */
  fetchPatches(only?: ReadonlySet<number>): Promise<void>;
}

/** The next base of a copy: what it would upload ({@link foldBytes}), and the upload ({@link compact}). */
export class Compactor {
  constructor(private readonly r: Compactable) {}

  /** About the bytes {@link compact} would upload now, and fetch first for a merge (for a pass's estimate of its time). */
  foldBytes(): number {
    const kind = this.nextFold();
    if (kind === "chunks") return this.patchedChunks().size * this.r.file.chunkBytes + this.r.hotBytes;
    if (kind === "merge") {
      // What it uploads, and what a lazy copy fetches first: the patches of kept pages it lacks, the chunks it rewrites.
      const plan = this.mergePlan();
      const patches = this.r.base?.manifest.patches ?? [];
      const fetched =
        [...this.lackingPatches(plan)].reduce((n, from) => n + (patches[from]?.bytes ?? 0), 0) +
        [...plan.rewrite].filter((chunk) => !this.r.file.has(chunk)).length * this.r.file.chunkBytes;
      return (
        plan.rewrite.size * this.r.file.chunkBytes +
        plan.kept.length * this.r.file.blockBytes +
        this.r.hotBytes +
        fetched
      );
    }
    return (
      this.r.file.dirtyBlocks.size * this.r.file.blockBytes +
      Math.max(0, this.r.file.length() - (this.r.base?.manifest.length ?? 0))
    );
  }

  /**
   * What the next compaction makes: chunks only for the first one (no base yet), one after a
   * VACUUM shortened the file, or a dense one on a base without patches; a merge of the patches
   * for a dense one on a base with patches, or past their bounds; else a patch.
   */
  private nextFold(): "patch" | "merge" | "chunks" {
    const manifest = this.r.base?.manifest;
    // A base from before hot pages existed gets them (its patches could not say which pages are hot).
    if (!manifest?.hot || this.r.file.length() < manifest.length) return "chunks";
    const patches = manifest.patches ?? [];
    const written = this.r.file.dirtyBlocks.size * this.r.file.blockBytes;
    const dense =
      written >= DENSE_MIN_BYTES && written >= DENSE_SHARE * this.r.file.dirty.size * this.r.file.chunkBytes;
    // A dense fold rewrites its chunks now, not as a patch uploaded again by the next merge
    // (a merge leaves a patch behind: page 1, SQLite's header, changes on every write).
    if (dense) return patches.length === 0 ? "chunks" : "merge";
    const bytes = patches.reduce((n, patch) => n + patch.bytes, 0) + written;
    return patches.length >= MAX_PATCHES || bytes > MAX_PATCH_BYTES ? "merge" : "patch";
  }

  /** What a merge would do now: the blocks whose bytes are not their chunk object's, planned by `merge-plan.ts`. */
  private mergePlan(): MergePlan {
    const manifest = this.r.base?.manifest as Manifest;
    const { blockBytes, chunkBytes } = this.r.file;
    const length = this.r.file.length();
    const patched = new Set<number>();
    this.r.layout.source.forEach((from, block) => {
      if (from !== FROM_CHUNK) patched.add(block);
    });
    for (const block of this.r.file.dirtyBlocks) if (block * blockBytes < length) patched.add(block);
    // Past the base's end: written or holes, none in a chunk object.
    for (let block = Math.ceil(manifest.length / blockBytes); block * blockBytes < length; block++) patched.add(block);
    const chunked = manifest.chunked ?? manifest.length;
    const chunks = Math.ceil(length / chunkBytes);
    let covered = 0;
    const holds = (chunk: number) =>
      Math.min(length, (chunk + 1) * chunkBytes) === Math.min(chunked, (chunk + 1) * chunkBytes);
    while (covered < Math.min(chunks, manifest.chunks.length) && holds(covered)) covered++;
    return planMerge({
      perChunk: chunkBytes / blockBytes,
      chunks,
      covered,
      patched,
      denseShare: MERGE_DENSE_SHARE,
      maxKeptPages: Math.floor(Math.min(MAX_MERGED_BYTES, length * MAX_MERGED_SHARE) / blockBytes),
    });
  }

  /** The patches (by index) that hold last a page a merge keeps and this copy lacks: fetched whole, not their chunks. */
  private lackingPatches(plan: MergePlan): Set<number> {
    const lacking = new Set<number>();
    for (const page of plan.kept) {
      if (!this.r.file.hasBlock(page - 1)) lacking.add(this.r.layout.source[page - 1] as number);
    }
    return lacking;
  }

  /** The chunks that hold a block written here or one a patch holds: what a compaction of whole chunks rewrites. */
  private patchedChunks(): Set<number> {
    const chunks = new Set(this.r.file.dirty);
    const perChunk = this.r.file.chunkBytes / this.r.file.blockBytes;
    for (const list of this.r.layout.pages) for (const page of list) chunks.add(Math.floor((page - 1) / perChunk));
    return chunks;
  }

  /**
   * Makes the new base of change `seq` from this copy: a patch of the pages written since
   * the base (and of those that are hot) with the base's chunks; past the patches' bounds, a
   * merge of them (the chunks most of whose pages are patched rewritten, the other patched pages
   * in one patch); or, for a first base, chunks only. Uploads them and a manifest naming them.
   * The copy is not changed; `Replica.rebase` adopts the result once the pointer names it.
   */
  async compact(
    userId: string,
  ): Promise<{ key: string; manifest: Manifest; uploaded: number; kind: "patch" | "merge" | "chunks" }> {
    const pageBytes = this.r.base?.manifest.pageBytes ?? pageSizeOf(this.r.file) ?? NEW_FILE_PAGE_BYTES;
    if (this.r.file.blockBytes !== pageBytes && this.r.base) throw new Error("the base's page size changed");
    const kind = this.nextFold();
    const made =
      kind === "chunks"
        ? await this.compactChunks(userId, pageBytes)
        : kind === "merge"
          ? await this.mergePatches(userId)
          : await this.addPatch(userId);
    const key = manifestKey(userId, this.r.seq);
    const body = encodeManifest(made.manifest);
    await this.r.blobs.put(key, body);
    return { key, manifest: made.manifest, uploaded: made.uploaded + body.length, kind };
  }

  /** A new base: the base's chunks and patches, and a patch of the pages written since (and of the hot ones among them). */
  private async addPatch(userId: string): Promise<{ manifest: Manifest; uploaded: number }> {
    const manifest = this.r.base?.manifest as Manifest;
    const length = this.r.file.length();
    const { blockBytes } = this.r.file;
    // Every block past the base's end too: SQLite grows a file without writing each page (a
    // page it allocates and frees in one transaction stays a hole, which reads as zeros).
    const blocks = new Set([...this.r.file.dirtyBlocks].filter((block) => block * blockBytes < length));
    for (let block = Math.ceil(manifest.length / blockBytes); block * blockBytes < length; block++) blocks.add(block);
    const pages = [...blocks].map((block) => block + 1).sort((a, b) => a - b);
    const next: Manifest = { ...manifest, length, chunked: manifest.chunked ?? manifest.length };
    if (pages.length === 0) return { manifest: next, uploaded: 0 };
    const read: PageReader = async (n) => this.r.file.read((n - 1) * blockBytes, n * blockBytes);
    const patch: Patch = { key: chunkKey(userId), pages: encodePages(pages), bytes: 0 };
    const body = await encodeHotPages(pages, blockBytes, read);
    patch.bytes = body.length;
    const written = new Set(pages);
    const hot = (await this.hotSet(blockBytes)).filter((n) => written.has(n));
    const hotBody = hot.length > 0 ? await encodeHotPages(hot, blockBytes, read) : undefined;
    if (hotBody) patch.hot = chunkKey(userId);
    await Promise.all([
      this.r.blobs.put(patch.key, body),
      hotBody && patch.hot ? this.r.blobs.put(patch.hot, hotBody) : undefined,
    ]);
    next.patches = [...(manifest.patches ?? []), patch];
    return { manifest: next, uploaded: body.length + (hotBody?.length ?? 0) };
  }

  /** A new base of chunks only: those that hold pages written or patched since rewritten, the others kept; the hot pages again. */
  private async compactChunks(userId: string, pageBytes: number): Promise<{ manifest: Manifest; uploaded: number }> {
    const length = this.r.file.length();
    const { chunkBytes } = this.r.file;
    const count = Math.ceil(length / chunkBytes);
    const old = this.r.base?.manifest.chunks ?? [];
    const chunked = this.r.base ? (this.r.base.manifest.chunked ?? this.r.base.manifest.length) : 0;
    const rewritten = this.patchedChunks();
    const chunks: string[] = [];
    const changed: number[] = [];
    for (let i = 0; i < count; i++) {
      const end = Math.min(length, (i + 1) * chunkBytes);
      const oldEnd = Math.min(chunked, (i + 1) * chunkBytes);
      if (i < old.length && !rewritten.has(i) && end === oldEnd) chunks.push(old[i] as string);
      else {
        chunks.push(chunkKey(userId));
        changed.push(i);
      }
    }
    let uploaded = await this.uploadChunks(changed, chunks);
    const hot = await this.uploadHot(userId, pageBytes);
    uploaded += hot.bytes;
    return { manifest: { length, pageBytes, chunkBytes, chunks, hot: hot.key }, uploaded };
  }

  /**
   * Uploads chunks `changed` of the file as they are now under their keys in `chunks` (fetching
   * first what they lack), a few at once: what it takes follows the bytes over the parallel
   * uploads, not one round trip per chunk. @returns the bytes uploaded
   */
  private async uploadChunks(changed: readonly number[], chunks: readonly string[]): Promise<number> {
    const { chunkBytes } = this.r.file;
    const length = this.r.file.length();
    let uploaded = 0;
    await eachAtOnce(changed, PARALLEL_UPLOADS, async (i) => {
      if (this.r.base && !this.r.file.has(i)) await this.r.fetch(i);
      const bytes = this.r.file.read(i * chunkBytes, Math.min(length, (i + 1) * chunkBytes));
      await this.r.blobs.put(chunks[i] as string, bytes);
      uploaded += bytes.length;
    });
    return uploaded;
  }

  /**
   * A new base that merges the patches ({@link mergePlan}): the chunks most of whose pages are
   * patched (and those the file grew into) rewritten, the other chunks kept, and every other
   * patched page in one patch; the hot pages again, split between the chunks' object and the
   * patch's (a fresh reader takes a page from the object that holds it last).
   */
  private async mergePatches(userId: string): Promise<{ manifest: Manifest; uploaded: number }> {
    const manifest = this.r.base?.manifest as Manifest;
    const { blockBytes, chunkBytes } = this.r.file;
    const length = this.r.file.length();
    const plan = this.mergePlan();
    await this.r.fetchPatches(this.lackingPatches(plan));
    const count = Math.ceil(length / chunkBytes);
    const chunks = Array.from({ length: count }, (_, i) =>
      plan.rewrite.has(i) ? chunkKey(userId) : (manifest.chunks[i] as string),
    );
    let uploaded = await this.uploadChunks(
      [...plan.rewrite].sort((a, b) => a - b),
      chunks,
    );
    const read = this.pageReader(blockBytes);
    const kept = new Set(plan.kept);
    const hot = await this.hotSet(blockBytes);
    const chunkHot = await encodeHotPages(
      hot.filter((n) => !kept.has(n)),
      blockBytes,
      read,
    );
    const next: Manifest = { length, pageBytes: blockBytes, chunkBytes, chunks, hot: chunkKey(userId) };
    const bodies = new Map([[next.hot as string, chunkHot]]);
    let hotBytes = chunkHot.length;
    if (plan.kept.length > 0) {
      const body = await encodeHotPages(plan.kept, blockBytes, read);
      const patch: Patch = { key: chunkKey(userId), pages: encodePages(plan.kept), bytes: body.length };
      bodies.set(patch.key, body);
      const patchHot = hot.filter((n) => kept.has(n));
      if (patchHot.length > 0) {
        patch.hot = chunkKey(userId);
        bodies.set(patch.hot, await encodeHotPages(patchHot, blockBytes, read));
        hotBytes += bodies.get(patch.hot)?.length ?? 0;
      }
      next.patches = [patch];
    }
    await Promise.all([...bodies].map(([key, body]) => this.r.blobs.put(key, body)));
    for (const body of bodies.values()) uploaded += body.length;
    this.r.hotBytes = hotBytes;
    return { manifest: next, uploaded };
  }

  /** The file's hot pages as they are now (`hot-pages.ts`), read from this copy (fetching those it lacks). */
  private async hotSet(pageBytes: number): Promise<number[]> {
    const read = this.pageReader(pageBytes);
    const schema = await this.r.run(async () => readSchema(this.r.driver));
    const trees: Tree[] = [{ root: 1, whole: true }];
    for (const row of schema)
      if (row.rootpage > 0) trees.push({ root: row.rootpage, whole: WHOLE_TREE.test(row.name) });
    const pages = new Set(await hotPages(trees, read));
    // FTS5's first records may overflow their leaf: the pages a read of them touches.
    const touched = new Set<number>();
    for (const name of fts5Tables(schema)) {
      const sql = `SELECT length(block) FROM ${quote(`${name}_data`)} WHERE ${FTS5_RECORDS}`;
      await this.r.run(async () => {
        this.r.file.recording = touched;
        try {
          return this.r.driver.prepare(sql).all();
        } finally {
          this.r.file.recording = undefined;
        }
      });
    }
    const pageCount = Math.ceil(this.r.file.length() / pageBytes);
    for (const block of touched) if (block < pageCount) pages.add(block + 1);
    return [...pages].sort((a, b) => a - b);
  }

  /**
   * Uploads the file's hot pages as they are now, under a chunk's key. A copy opened with its
   * base's hot pages (or whole) has every interior page of that base, and those SQLite changed
   * since, so it fetches little.
   */
  private async uploadHot(userId: string, pageBytes: number): Promise<{ key: string; bytes: number }> {
    const pages = await this.hotSet(pageBytes);
    const body = await encodeHotPages(pages, pageBytes, this.pageReader(pageBytes));
    const key = chunkKey(userId);
    await this.r.blobs.put(key, body);
    this.r.hotBytes = body.length;
    return { key, bytes: body.length };
  }

  /** Reads a page of this copy, fetching its chunk first when it is not here. */
  private pageReader(pageBytes: number): PageReader {
    return async (n) => {
      if (!this.r.file.hasBlock(n - 1)) await this.r.fetch(this.chunkOf(n - 1));
      return this.r.file.read((n - 1) * pageBytes, n * pageBytes);
    };
  }

  /** The chunk that holds block `block` (0-based). */
  private chunkOf(block: number): number {
    return Math.floor((block * this.r.file.blockBytes) / this.r.file.chunkBytes);
  }
}

/** The page size in a SQLite file's header (bytes 16–17; 1 means 65536). */
function pageSizeOf(file: SparseFile): number | undefined {
  const header = file.read(16, 18);
  if (header.length < 2) return undefined;
  const size = (header[0] as number) * 256 + (header[1] as number);
  return size === 1 ? 65536 : size;
}
