/**
 * What `watch` and `push` know of each local file: the session it holds, the generation and
 * the bytes the server confirmed, a fingerprint of those bytes and the file's inode, to notice a
 * file that was truncated, rewritten or replaced under us (see `fingerprint`). Kept in
 * one JSON file per server identity and account (see `identity.ts`: two servers, a server
 * started afresh at the same address, or two accounts never share what they confirmed), written
 * atomically.
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
  /** The file's inode when last sent: another inode is another file (replaced by a rename). */
  ino?: number;
  lastError?: string;
  /** Set when the current generation was made because this file no longer joins the cloud's copy. */
  diverged?: boolean;
  /** Why the current generation was made ("rewritten", "conflict on entry …"), naming the other device when known. */
  reason?: string;
  /**
   * The cloud offset whose lines [0, cloudAt) hold the same entries as the file's [0, sent), in
   * another order once a merge happened; absent: equal to `sent` (the bytes are the same).
   */
  cloudAt?: number;
  /**
   * When the file starts with oh-my-pi's title slot: its length, a hash of its bytes and a
   * fingerprint of the confirmed bytes after it. Confirmed bytes that changed only in the slot
   * are a rename, not a rewrite.
   */
  slot?: { length: number; hash: string; tail: string };
  /** Merges in the current generation: entries appended here from the cloud, entries sent from here. */
  merged?: { fromCloud: number; toCloud: number; devices?: string[] };
  updatedAt: string;
}

/** Up to this length, the fingerprint hashes every byte. */
const WHOLE = 4 * 1024 * 1024;
/** Beyond it: the first and the last 256 KiB, and 64 windows of 4 KiB spread evenly between. */
const EDGE = 256 * 1024;
const WINDOW = 4096;
const WINDOWS = 64;
/** Fingerprints of this version; one in another form (an older pisync) proves nothing. */
const VERSION = "v2";

/** The byte ranges a fingerprint of the first `n` bytes covers (at most ~770 KiB beyond `WHOLE`). */
function fingerprintRanges(n: number): [number, number][] {
  if (n <= WHOLE) return [[0, n]];
  const ranges: [number, number][] = [[0, EDGE]];
  const step = Math.floor((n - 2 * EDGE) / (WINDOWS + 1));
  for (let i = 1; i <= WINDOWS; i++) ranges.push([EDGE + i * step, EDGE + i * step + WINDOW]);
  ranges.push([n - EDGE, n]);
  return ranges;
}

/**
 * A hash of a file's first `n` bytes: all of them up to 4 MiB (a rewrite anywhere shows), else
 * the edges and 64 windows spread through the file (bounded work on every sync; a file
 * replaced by another inode, or shorter than confirmed, is compared in full anyway).
 */
export function fingerprint(path: string, n: number): string {
  return fingerprintFrom((start, end) => readRange(path, start, end), n);
}

/** The fingerprint of the file's bytes [start, end): the confirmed bytes after a title slot. */
export function fingerprintBetween(path: string, start: number, end: number): string {
  return fingerprintFrom((from, to) => readRange(path, start + from, start + to), Math.max(0, end - start));
}

/** The same fingerprint, from bytes in memory. */
export function fingerprintOf(bytes: Uint8Array, n: number): string {
  return fingerprintFrom((start, end) => bytes.subarray(start, end), n);
}

function fingerprintFrom(read: (start: number, end: number) => Uint8Array, n: number): string {
  const hash = createHash("sha256");
  for (const [start, end] of fingerprintRanges(n)) {
    // Whole-file hashing reads in 1 MiB pieces: bounded memory.
    for (let at = start; at < end; at += 1024 * 1024) hash.update(read(at, Math.min(end, at + 1024 * 1024)));
  }
  return `${VERSION}:${n}:${hash.digest("hex").slice(0, 32)}`;
}

/** Whether a fingerprint was made by this version (older ones prove nothing either way). */
export function isCurrentFingerprint(value: string | undefined): boolean {
  return value?.startsWith(`${VERSION}:`) ?? false;
}

export class StateStore {
  private files: Record<string, FileState> = {};
  /** Hashes of blobs the server is known to hold. */
  private blobs: Record<string, 1> = {};
  private timer: NodeJS.Timeout | undefined;
  readonly path: string;

  /**
   * @param scope whose confirmations these are: `scopeOf` a server's identity and account (an
   *   address only for a server without `/v1/whoami`)
   */
  constructor(scope: string, env: Env = process.env) {
    const server = createHash("sha256").update(scope).digest("hex").slice(0, 12);
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

  /** Forgets that the server holds a blob (it said it lacks it: a delete removed it). */
  forgetBlob(hash: string): void {
    delete this.blobs[hash];
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
