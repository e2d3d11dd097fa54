/**
 * Blobs as files under one folder. Writes are atomic (temp file, fsync, rename), so a crash
 * leaves the old object or the new one, never a half-written one; a failed write removes its
 * temp file, and those a crash left are removed when the store opens ({@link removeStaleTemps}).
 */
import { randomBytes } from "node:crypto";
import type { Dirent } from "node:fs";
import { readdirSync, statSync, unlinkSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { NotFoundError } from "../errors.js";
import type { BlobStore, ObjectInfo } from "../ports.js";
import { classifyLocalError } from "./classify.js";

/** What a write's temporary file ends with (`<key>.<random>.tmp`); no key does. */
const TEMP_SUFFIX = ".tmp";

/** Temp files older than this are a crash's leftovers (a write takes far less). */
export const STALE_TEMP_MS = 5 * 60_000;

/**
 * Removes the `*.tmp` files under `root` older than `olderThanMs`: writes a crash cut short
 * (another process's write in progress is younger). @returns how many were removed
 */
export function removeStaleTemps(root: string, olderThanMs = STALE_TEMP_MS, now = Date.now()): number {
  let removed = 0;
  for (const name of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (!name.endsWith(TEMP_SUFFIX)) continue;
    const path = join(root, name);
    try {
      if (now - statSync(path).mtimeMs < olderThanMs) continue;
      unlinkSync(path);
      removed++;
    } catch (error) {
      // Renamed or removed meanwhile by the write that made it: nothing left to do.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return removed;
}

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/**
 * The embedded {@link BlobStore}: each key a file under `root` (folders made as needed).
 * `get` of a missing key throws `NotFoundError`; a key outside the safe alphabet (or one
 * with `..`) throws before touching the disk.
 */
export class FileBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    // Keys come from validated ids, but the file system is the last line: no `..`, no absolute paths.
    if (!SAFE_KEY.test(key) || key.split("/").some((part) => part === "." || part === "..")) {
      throw new Error(`unsafe blob key: ${key}`);
    }
    return join(this.root, ...key.split("/"));
  }

  /** @throws StorageFullError when the disk has no room (no temp file is left behind) */
  async put(key: string, body: Uint8Array): Promise<void> {
    const path = this.path(key);
    const temp = `${path}.${randomBytes(6).toString("hex")}${TEMP_SUFFIX}`;
    try {
      // Readable by the owner only (0700 folders, 0600 files), whatever the umask.
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const file = await open(temp, "w", 0o600);
      try {
        await file.writeFile(body);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => {});
      throw classifyLocalError(error);
    }
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Uint8Array> {
    const path = this.path(key);
    try {
      if (!range) return new Uint8Array(await readFile(path));
      const file = await open(path, "r");
      try {
        const length = Math.max(0, range.end - range.start);
        const buffer = new Uint8Array(length);
        const { bytesRead } = await file.read(buffer, 0, length, range.start);
        return buffer.subarray(0, bytesRead);
      } finally {
        await file.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new NotFoundError(key);
      // Out of file handles is an outage (503), as for writes.
      throw classifyLocalError(error);
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => rm(this.path(key), { force: true })));
  }

  async list(prefix: string): Promise<string[]> {
    return (await this.listObjects(prefix)).map((object) => object.key);
  }

  async listObjects(prefix: string): Promise<ObjectInfo[]> {
    return (await this.walk(prefix)).filter((object) => !object.key.endsWith(TEMP_SUFFIX));
  }

  /**
   * The temporary files of writes under a prefix (`<key>.<random>.tmp`): a write that crashed
   * or failed leaves one; the sweep removes those older than any write can take.
   */
  async listTemporary(prefix = ""): Promise<ObjectInfo[]> {
    return (await this.walk(prefix)).filter((object) => object.key.endsWith(TEMP_SUFFIX));
  }

  /** Removes temporary files that {@link listTemporary} named (anything else is refused). */
  async deleteTemporary(keys: readonly string[]): Promise<void> {
    for (const key of keys) if (!key.endsWith(TEMP_SUFFIX)) throw new Error(`not a temporary file: ${key}`);
    await Promise.all(keys.map((key) => rm(this.path(key), { force: true })));
  }

  /** Every file under a prefix (temporary ones included), in key order. */
  private async walk(prefix: string): Promise<ObjectInfo[]> {
    const base = join(this.root, ...prefix.split("/").filter(Boolean));
    const found: ObjectInfo[] = [];
    const visit = async (dir: string): Promise<void> => {
      let entries: Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
        throw error;
      }
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await visit(path);
        else {
          const key = relative(this.root, path).split(sep).join("/");
          if (!key.startsWith(prefix)) continue;
          // A file removed since the folder was read is not listed.
          const info = await stat(path).catch(() => undefined);
          if (info) found.push({ key, size: info.size, modifiedAt: info.mtime });
        }
      }
    };
    await visit(base);
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async uploadUrl(): Promise<string | undefined> {
    return undefined;
  }
}
