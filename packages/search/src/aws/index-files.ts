/**
 * Users' index files, fetched from the bucket once per key and kept on local disk (Lambda's
 * `/tmp`): a key names an immutable object, so a cached copy is never stale. The least
 * recently used files go first once the cache holds more than its budget.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BlobStore } from "@pisync/store";
import { SqliteSearchIndex } from "../embedded.js";
import type { LineSource } from "../port.js";
import { WasmSqlite } from "./wasm-sqlite.js";

/** A cached index file, open for reading. */
export interface IndexFile {
  path: string;
  bytes: number;
  driver: WasmSqlite;
  index: SqliteSearchIndex;
}

/** The cache of index files in one folder. */
export class IndexFiles {
  /** By object key, least recently used first (a Map keeps insertion order). */
  private readonly files = new Map<string, IndexFile>();
  private readonly loading = new Map<string, Promise<IndexFile>>();
  private total = 0;
  /** Whether the folder was made (and emptied) yet. */
  private made = false;

  constructor(
    private readonly blobs: BlobStore,
    private readonly lines: LineSource,
    /** A folder of this process's own (emptied when first used). */
    readonly dir: string,
    private readonly budgetBytes: number,
  ) {}

  /** A fresh path in the cache's folder, for a file being built (the folder is made on first use, emptied). */
  scratch(): string {
    if (!this.made) {
      rmSync(this.dir, { recursive: true, force: true });
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.made = true;
    }
    return join(this.dir, `${randomUUID()}.sqlite`);
  }

  /** The file of `key`, fetched when it is not here yet. @throws NotFoundError when the object is gone */
  async open(key: string): Promise<IndexFile> {
    const cached = this.files.get(key);
    if (cached) {
      this.files.delete(key);
      this.files.set(key, cached);
      return cached;
    }
    let loading = this.loading.get(key);
    if (!loading) {
      loading = this.fetch(key).finally(() => this.loading.delete(key));
      this.loading.set(key, loading);
    }
    return loading;
  }

  private async fetch(key: string): Promise<IndexFile> {
    const bytes = await this.blobs.get(key);
    const path = this.scratch();
    writeFileSync(path, bytes, { mode: 0o600 });
    return this.adopt(key, path, bytes.length);
  }

  /** Takes a file built here (and uploaded as `key`) into the cache. */
  adopt(key: string, path: string, bytes: number): IndexFile {
    const driver = new WasmSqlite(path);
    const file = { path, bytes, driver, index: new SqliteSearchIndex(driver, this.lines) };
    this.files.set(key, file);
    this.total += bytes;
    this.evict(key);
    return file;
  }

  /** Forgets a key (its object was replaced): its file is closed and removed. */
  drop(key: string): void {
    const file = this.files.get(key);
    if (!file) return;
    this.files.delete(key);
    this.total -= file.bytes;
    file.driver.close();
    rmSync(file.path, { force: true });
  }

  /** Closes every file and removes the folder. */
  close(): void {
    for (const key of [...this.files.keys()]) this.drop(key);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Drops the least recently used files until the cache fits its budget (never `keep`). */
  private evict(keep: string): void {
    for (const key of [...this.files.keys()]) {
      if (this.total <= this.budgetBytes) return;
      if (key !== keep) this.drop(key);
    }
  }
}
