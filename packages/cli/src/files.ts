/** Small file helpers: atomic writes (temp file + rename) and reading byte ranges. */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** Writes a file so that a crash leaves the old content or the new, never a mix. */
export function writeAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  const fd = openSync(temp, "w", mode);
  try {
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

/** Bytes [start, end) of a file (fewer if it is shorter). */
export function readRange(path: string, start: number, end: number): Uint8Array {
  const length = Math.max(0, end - start);
  const buffer = new Uint8Array(length);
  const fd = openSync(path, "r");
  try {
    let at = 0;
    while (at < length) {
      const n = readSync(fd, buffer, at, length - at, start + at);
      if (n === 0) break;
      at += n;
    }
    return buffer.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}
