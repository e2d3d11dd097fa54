/**
 * What `watch` and `push` know of each local file: the session it holds, the generation and
 * the bytes the server confirmed, and a fingerprint of those bytes (hashes of the first and the
 * last 4 KiB before the confirmed end) to notice a file that was rewritten under us. Kept in
 * one JSON file per server (two servers never share what they confirmed), written atomically.
 * Losing it loses nothing: the server's offset protocol turns re-sent bytes into retries.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readRange, writeAtomic } from "./files.js";
import { type Env, stateDir } from "./paths.js";

export interface FileState {
  sessionId: string;
  generation: number;
  /** Bytes the server confirmed stored. */
  sent: number;
  fingerprint: string;
  /** The local file's complete length when last seen. */
  local: number;
  lastError?: string;
  /** Set when another machine writes this session too (see README). */
  diverged?: boolean;
  updatedAt: string;
}

const WINDOW = 4096;

/** Hashes of bytes [0, 4 KiB) and [n − 4 KiB, n) of a file. */
export function fingerprint(path: string, n: number): string {
  const hash = createHash("sha256");
  hash.update(readRange(path, 0, Math.min(WINDOW, n)));
  hash.update(readRange(path, Math.max(0, n - WINDOW), n));
  return `${n}:${hash.digest("hex").slice(0, 32)}`;
}

/** The same windows, from bytes in memory. */
export function fingerprintOf(bytes: Uint8Array, n: number): string {
  const hash = createHash("sha256");
  hash.update(bytes.subarray(0, Math.min(WINDOW, n)));
  hash.update(bytes.subarray(Math.max(0, n - WINDOW), n));
  return `${n}:${hash.digest("hex").slice(0, 32)}`;
}

export class StateStore {
  private files: Record<string, FileState> = {};
  /** Hashes of blobs the server is known to hold. */
  private blobs: Record<string, 1> = {};
  private timer: NodeJS.Timeout | undefined;
  readonly path: string;

  constructor(endpoint: string, env: Env = process.env) {
    const server = createHash("sha256").update(endpoint).digest("hex").slice(0, 12);
    this.path = join(stateDir(env), `state-${server}.json`);
    try {
      const parsed = JSON.parse(readFileSync(this.path, "utf8"));
      if (parsed && typeof parsed.files === "object") this.files = parsed.files;
      if (parsed && typeof parsed.blobs === "object") this.blobs = parsed.blobs;
    } catch {}
  }

  get(path: string): FileState | undefined {
    return this.files[path];
  }

  all(): Record<string, FileState> {
    return this.files;
  }

  set(path: string, state: FileState): void {
    this.files[path] = state;
    this.scheduleSave();
  }

  hasBlob(hash: string): boolean {
    return this.blobs[hash] === 1;
  }

  addBlob(hash: string): void {
    this.blobs[hash] = 1;
    this.scheduleSave();
  }

  update(path: string, change: Partial<FileState>): void {
    const current = this.files[path];
    if (current) this.set(path, { ...current, ...change });
  }

  /** Writes soon (coalescing bursts); `flush` writes now. */
  private scheduleSave(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), 100);
    this.timer.unref();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    writeAtomic(this.path, JSON.stringify({ version: 1, files: this.files, blobs: this.blobs }));
  }
}
