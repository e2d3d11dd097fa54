/**
 * One user's index on this instance: a sparse copy of the base (chunks fetched as SQLite reads
 * them, `sparse-file.ts`) with the log's changes replayed on it, up to {@link Replica.seq}.
 * SQLite cannot wait for a fetch, so a statement that reads a missing chunk fails; {@link Replica.run}
 * fetches the chunk and runs the whole unit again (a transaction that failed is rolled back first).
 * A fresh instance's query thus fetches the chunks it touches, not the file.
 */
import { rmSync } from "node:fs";
import type { BlobStore } from "@pisync/store";
import { SqliteSearchIndex } from "../embedded.js";
import type { LineSource } from "../port.js";
import {
  type Change,
  chunkKey,
  decodeChange,
  decodeManifest,
  encodeManifest,
  type Manifest,
  manifestKey,
} from "./objects.js";
import type { LogEntry } from "./pointers.js";
import { SparseFile } from "./sparse-file.js";
import { WasmSqlite } from "./wasm-sqlite.js";

/** Chunks fetched at once. */
const PARALLEL_FETCHES = 8;
/** Chunks fetched after a missed one at most (8 MiB of 128 KiB chunks). */
const MAX_READ_AHEAD = 64;
/** SQLite's page size in a file without a base yet (SQLite's default). */
const NEW_FILE_PAGE_BYTES = 4096;

/** A replayed change that did not apply as it did for its writer: this copy is not the writer's, and is dropped. */
export class DivergedError extends Error {}

/** A user's index on this instance. */
export class Replica {
  /** Chunks fetched, in bytes (for the bench and the tests). */
  fetchedBytes = 0;

  private constructor(
    private readonly blobs: BlobStore,
    readonly file: SparseFile,
    /** The base this copy started from (undefined: an empty file). */
    public base: { key: string; manifest: Manifest } | undefined,
    /** The last change applied. */
    public seq: number,
    private readonly driverRef: { driver?: WasmSqlite; index?: SqliteSearchIndex },
  ) {}

  /**
   * A copy of the base `base` names (empty when none) at change `seq`: its manifest and first
   * chunk (SQLite's header and schema) are fetched now, the rest when read — or all of it now,
   * in parallel, when the base is at most `eagerBytes` (a small index costs one round trip, not
   * one per chunk its first query touches).
   */
  static async open(
    blobs: BlobStore,
    lines: LineSource,
    path: string,
    base: { key: string; seq: number } | undefined,
    sizes: { chunkBytes: number; eagerBytes: number },
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
      if (manifest && manifest.length <= eagerBytes) await replica.materialize();
      else if (manifest && manifest.chunks.length > 0) await replica.fetch(0);
      refs.driver = new WasmSqlite(path);
      await replica.run(async () => {
        refs.index ??= new SqliteSearchIndex(refs.driver as WasmSqlite, lines);
      });
    } catch (error) {
      replica.close();
      throw error;
    }
    return replica;
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

  /** Up to `count` chunks of the base after `chunk` (wrapping around) that are not here yet. */
  private absentAfter(chunk: number, count: number): number[] {
    const chunks = this.base?.manifest.chunks.length ?? 0;
    const found: number[] = [];
    for (let i = 1; i < chunks && found.length < count; i++) {
      const next = (chunk + i) % chunks;
      if (!this.file.has(next)) found.push(next);
    }
    return found;
  }

  /** Fetches chunks, {@link PARALLEL_FETCHES} at a time. */
  private async fetchAll(wanted: readonly number[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < wanted.length) await this.fetch(wanted[next++] as number);
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_FETCHES, wanted.length) }, worker));
  }

  /** Applies the log's entries after {@link seq} (each in its own transaction). @throws DivergedError */
  async replay(entries: readonly LogEntry[]): Promise<void> {
    for (const entry of entries) {
      if (entry.seq <= this.seq) continue;
      if (entry.seq !== this.seq + 1) throw new DivergedError(`change ${entry.seq} follows ${this.seq}`);
      const change = decodeChange(await this.blobs.get(entry.key));
      await this.run(() => this.transaction(() => this.apply(change)));
      this.seq = entry.seq;
    }
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

  /**
   * Uploads the chunks written since the base (fetching first what they lack) and a manifest
   * naming them with the unchanged ones: the new base of change {@link seq}. The copy is not
   * changed; {@link rebase} adopts the result once the pointer names it.
   */
  async compact(userId: string): Promise<{ key: string; manifest: Manifest; uploaded: number }> {
    const length = this.file.length();
    const { chunkBytes, blockBytes } = this.file;
    const pageBytes = this.base?.manifest.pageBytes ?? pageSizeOf(this.file) ?? NEW_FILE_PAGE_BYTES;
    if (blockBytes !== pageBytes && this.base) throw new Error("the base's page size changed");
    const count = Math.ceil(length / chunkBytes);
    const old = this.base?.manifest.chunks ?? [];
    const chunks: string[] = [];
    let uploaded = 0;
    for (let i = 0; i < count; i++) {
      const start = i * chunkBytes;
      const end = Math.min(length, start + chunkBytes);
      const oldEnd = this.base ? Math.min(this.base.manifest.length, start + chunkBytes) : 0;
      if (i < old.length && !this.file.dirty.has(i) && end === oldEnd) {
        chunks.push(old[i] as string);
        continue;
      }
      if (i < old.length && !this.file.has(i)) await this.fetch(i);
      const key = chunkKey(userId);
      const bytes = this.file.read(start, end);
      await this.blobs.put(key, bytes);
      uploaded += bytes.length;
      chunks.push(key);
    }
    const manifest: Manifest = { length, pageBytes, chunkBytes, chunks };
    const key = manifestKey(userId, this.seq);
    const body = encodeManifest(manifest);
    await this.blobs.put(key, body);
    return { key, manifest, uploaded: uploaded + body.length };
  }

  /** Fetches every chunk not here yet, a few at a time (a small base whole; before a VACUUM, which reads every page). */
  async materialize(): Promise<void> {
    const chunks = this.base?.manifest.chunks.length ?? 0;
    await this.fetchAll(Array.from({ length: chunks }, (_, chunk) => chunk).filter((chunk) => !this.file.has(chunk)));
  }

  /** Takes a base {@link compact} made from this copy as its own: nothing is dirty against it. */
  rebase(base: { key: string; manifest: Manifest }): void {
    this.base = base;
    this.file.dirty.clear();
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

  private async fetch(chunk: number): Promise<void> {
    const key = this.base?.manifest.chunks[chunk];
    if (key === undefined) throw new Error(`chunk ${chunk} is past the base`);
    const bytes = await this.blobs.get(key);
    this.fetchedBytes += bytes.length;
    this.file.fill(chunk, bytes);
  }
}

/** The page size in a SQLite file's header (bytes 16–17; 1 means 65536). */
function pageSizeOf(file: SparseFile): number | undefined {
  const header = file.read(16, 18);
  if (header.length < 2) return undefined;
  const size = (header[0] as number) * 256 + (header[1] as number);
  return size === 1 ? 65536 : size;
}
