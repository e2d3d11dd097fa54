/**
 * A local file that holds only the parts of a remote index the process has needed: it has the
 * remote file's length, but a block (a SQLite page) is there only once its chunk was fetched or
 * SQLite wrote it.
 *
 * SQLite's file I/O is synchronous and fetching is not, so a read of a block that is not there
 * fails instead of waiting: the WebAssembly SQLite does its I/O with `require("node:fs")`
 * (`openSync`, `readSync`, `writeSync` on the descriptor it opened), and those three are wrapped
 * here, for the paths of sparse files only. The failed read becomes SQLite's I/O error; the
 * caller fetches the chunk {@link SparseFile.missing} names and runs its statement again (see
 * `replica.ts`). Every fetch goes through the async BlobStore, and no thread blocks on the network.
 */
import fs from "node:fs";

const original = { openSync: fs.openSync, readSync: fs.readSync, writeSync: fs.writeSync, closeSync: fs.closeSync };
/** Sparse files by path (as SQLite opens them: absolute) and by the descriptors SQLite holds. */
const byPath = new Map<string, SparseFile>();
const byFd = new Map<number, SparseFile>();
let installed = false;

/** Wraps the `fs` calls the WebAssembly SQLite makes; other paths and descriptors pass through untouched. */
function install(): void {
  if (installed) return;
  installed = true;
  const patched = fs as { -readonly [K in keyof typeof original]: (typeof original)[K] };
  patched.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    const fd = (original.openSync as (...args: unknown[]) => number)(path, ...rest);
    const file = typeof path === "string" ? byPath.get(path) : undefined;
    if (file) byFd.set(fd, file);
    return fd;
  }) as typeof fs.openSync;
  patched.closeSync = ((fd: number) => {
    byFd.delete(fd);
    original.closeSync(fd);
  }) as typeof fs.closeSync;
  patched.readSync = ((fd: number, buffer: NodeJS.ArrayBufferView, ...rest: unknown[]) => {
    const file = byFd.get(fd);
    const [, length, position] = rest as [number, number, number | bigint | null];
    // SQLite's offsets arrive as BigInt (reads) or numbers (writes).
    if (file && position !== null && typeof length === "number") file.checkRead(Number(position), length);
    return (original.readSync as (...args: unknown[]) => number)(fd, buffer, ...rest);
  }) as typeof fs.readSync;
  patched.writeSync = ((fd: number, buffer: NodeJS.ArrayBufferView, ...rest: unknown[]) => {
    const file = byFd.get(fd);
    const [, length, position] = rest as [number, number, number | bigint | null];
    const written = (original.writeSync as (...args: unknown[]) => number)(fd, buffer, ...rest);
    if (file && position !== null && typeof length === "number") file.wrote(Number(position), length);
    return written;
  }) as typeof fs.writeSync;
}

/** A read of a block that is not here yet: SQLite sees an I/O error; the caller fetches and runs again. */
export class MissingChunkError extends Error {
  constructor(readonly chunk: number) {
    super(`chunk ${chunk} of the index is not here yet`);
  }
}

/** One sparse file: which blocks are here, and which chunks were written since the base. */
export class SparseFile {
  /** Per block below the base's end: 1 when its bytes are here. */
  private present: Uint8Array;
  /** Blocks below the base's end that are not here. */
  private absent: number;
  /**
   * Bumped when the file stops being a copy of the base it was (a {@link rebase}, a
   * {@link close}): bytes fetched before are not put in it ({@link fill}'s `generation`).
   */
  generation = 0;
  private baseBlocks: number;
  /** Chunks written since the base (what a compaction of whole chunks uploads). */
  readonly dirty = new Set<number>();
  /** Blocks written since the base (what a patch uploads). */
  readonly dirtyBlocks = new Set<number>();
  /** The first chunk a failed read needed, until {@link take} clears it. */
  missing: number | undefined;
  /** When set, the blocks SQLite reads (here or not) are added to it (what a probe statement touches). */
  recording: Set<number> | undefined;
  private readonly fd: number;

  /**
   * Makes `path` a file of `baseLength` bytes (holes) whose blocks are all missing.
   * `blockBytes` is the SQLite page size; `chunkBytes` a multiple of it.
   */
  constructor(
    readonly path: string,
    public baseLength: number,
    readonly blockBytes: number,
    readonly chunkBytes: number,
  ) {
    if (!(chunkBytes > 0 && Number.isInteger(chunkBytes / blockBytes))) {
      throw new Error(`a chunk (${chunkBytes} bytes) must be a whole number of pages (${blockBytes} bytes)`);
    }
    install();
    this.fd = original.openSync(path, "w+", 0o600);
    fs.ftruncateSync(this.fd, baseLength);
    this.baseBlocks = Math.ceil(baseLength / blockBytes);
    this.present = new Uint8Array(this.baseBlocks);
    this.absent = this.baseBlocks;
    byPath.set(path, this);
  }

  /** Called before SQLite reads: throws when a block of the range is not here (recorded in {@link missing}). */
  checkRead(position: number, length: number): void {
    const first = Math.floor(position / this.blockBytes);
    if (this.recording) {
      const end = Math.floor((position + Math.max(length, 1) - 1) / this.blockBytes);
      for (let block = first; block <= end; block++) this.recording.add(block);
    }
    const last = Math.min(this.baseBlocks - 1, Math.floor((position + Math.max(length, 1) - 1) / this.blockBytes));
    for (let block = first; block <= last; block++) {
      if (!this.present[block]) {
        this.missing ??= Math.floor((block * this.blockBytes) / this.chunkBytes);
        throw new MissingChunkError(this.missing);
      }
    }
  }

  /** Called after SQLite wrote: the blocks are here (SQLite writes whole pages), their chunks changed. */
  wrote(position: number, length: number): void {
    const first = Math.floor(position / this.blockBytes);
    const last = Math.floor((position + length - 1) / this.blockBytes);
    for (let block = first; block <= last; block++) {
      if (block < this.baseBlocks) this.mark(block);
      this.dirty.add(Math.floor((block * this.blockBytes) / this.chunkBytes));
      this.dirtyBlocks.add(block);
    }
  }

  /** The missing chunk a failed read recorded, cleared. */
  take(): number | undefined {
    const chunk = this.missing;
    this.missing = undefined;
    return chunk;
  }

  /** Whether every block of `chunk` below the base's end is here. */
  has(chunk: number): boolean {
    const [first, end] = this.blocksOf(chunk);
    for (let block = first; block < end; block++) if (!this.present[block]) return false;
    return true;
  }

  /**
   * Puts a fetched chunk's bytes in the blocks that are not here (blocks SQLite wrote since are
   * newer: kept), those `only` accepts (the others' bytes are a patch's); nothing when the fetch
   * started in another {@link generation}.
   */
  fill(chunk: number, bytes: Uint8Array, generation = this.generation, only?: (block: number) => boolean): void {
    if (generation !== this.generation) return;
    const [first, end] = this.blocksOf(chunk);
    const start = chunk * this.chunkBytes;
    for (let block = first; block < end; block++) {
      if (this.present[block] || (only && !only(block))) continue;
      const from = block * this.blockBytes - start;
      const part = bytes.subarray(from, Math.min(bytes.length, from + this.blockBytes));
      if (part.length === 0) continue; // past the chunk object's end: the block is a patch's
      original.writeSync(this.fd, part, 0, part.length, block * this.blockBytes);
      this.mark(block);
    }
  }

  /**
   * Makes the file a copy of another base of `baseLength` bytes, in the same chunks: the blocks
   * `kept` names (the same bytes in both bases, and not written here since) stay; every other
   * block is missing again. Nothing is dirty against the new base.
   */
  rebase(baseLength: number, kept: (block: number) => boolean): void {
    const blocks = Math.ceil(baseLength / this.blockBytes);
    const present = new Uint8Array(blocks);
    let absent = blocks;
    // Blocks past the file's end now (SQLite truncated it: a VACUUM) hold nothing, whatever their marks say.
    const held = Math.min(blocks, Math.floor(this.length() / this.blockBytes));
    for (let block = 0; block < held; block++) {
      if (this.hasBlock(block) && kept(block)) {
        present[block] = 1;
        absent--;
      }
    }
    fs.ftruncateSync(this.fd, baseLength);
    this.baseLength = baseLength;
    this.baseBlocks = blocks;
    this.present = present;
    this.absent = absent;
    this.dirty.clear();
    this.dirtyBlocks.clear();
    this.missing = undefined;
    this.generation++;
  }

  /** Whether every block of the base is here (nothing left to fetch). */
  complete(): boolean {
    return this.absent === 0;
  }

  private mark(block: number): void {
    if (this.present[block]) return;
    this.present[block] = 1;
    this.absent--;
  }

  /** Whether block `block` (0-based) is here: fetched, written, or past the base's end. */
  hasBlock(block: number): boolean {
    return block >= this.baseBlocks || this.present[block] === 1;
  }

  /** Puts fetched blocks' bytes (block → bytes) where blocks are not here yet (blocks SQLite wrote since are newer: kept). */
  fillBlocks(
    blocks: ReadonlyMap<number, Uint8Array>,
    generation = this.generation,
    only?: (block: number) => boolean,
  ): void {
    if (generation !== this.generation) return;
    for (const [block, bytes] of blocks) {
      if (block >= this.baseBlocks || this.present[block] || (only && !only(block))) continue;
      original.writeSync(this.fd, bytes, 0, bytes.length, block * this.blockBytes);
      this.mark(block);
    }
  }

  /** Bytes [start, end) of the file as it is now. */
  read(start: number, end: number): Uint8Array {
    const bytes = new Uint8Array(end - start);
    let done = 0;
    while (done < bytes.length) {
      const n = original.readSync(this.fd, bytes, done, bytes.length - done, start + done);
      if (n === 0) break;
      done += n;
    }
    return done === bytes.length ? bytes : bytes.subarray(0, done);
  }

  /** The file's length now (SQLite may have grown it past the base). */
  length(): number {
    return fs.fstatSync(this.fd).size;
  }

  /** Blocks here, in bytes (what the file takes on disk, about). */
  presentBytes(): number {
    let n = 0;
    for (const block of this.present) n += block;
    return n * this.blockBytes + Math.max(0, this.length() - this.baseLength);
  }

  /** Stops tracking the path and closes this object's descriptor (SQLite closes its own). */
  close(): void {
    this.generation++; // a fetch that lands later writes nothing (its descriptor may be another file's by then)
    byPath.delete(this.path);
    original.closeSync(this.fd);
  }

  private blocksOf(chunk: number): [number, number] {
    const first = (chunk * this.chunkBytes) / this.blockBytes;
    return [first, Math.min(this.baseBlocks, first + this.chunkBytes / this.blockBytes)];
  }
}
