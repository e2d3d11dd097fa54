/**
 * Appending the cloud's lines to a session file pi may be writing: one `O_APPEND` write of
 * whole lines, only while the file ends exactly where it was read (a complete line, nothing
 * partial pending, nothing written since). pi appends whole lines the same way, so neither
 * write can tear the other.
 */
import { closeSync, fstatSync, openSync, writeSync } from "node:fs";

/**
 * - `appended`: the bytes are at [expected, expected + length) and nothing else was written.
 * - `raced`: appended, but the file grew by something else too (pi wrote meanwhile): where
 *   each line landed is not known; the next round recognises them by id.
 * - `busy`: not written: the file is not `expected` bytes long (pi is writing).
 */
export type LocalAppend = "appended" | "raced" | "busy";

/** Appends whole lines to a file whose length must still be `expected` (see `LocalAppend`). */
export function appendWholeLines(path: string, bytes: Uint8Array, expected: number): LocalAppend {
  const fd = openSync(path, "a");
  try {
    if (fstatSync(fd).size !== expected) return "busy";
    // One write: a regular file takes it whole (a short write on a full disk goes on from there).
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    return fstatSync(fd).size === expected + bytes.length ? "appended" : "raced";
  } finally {
    closeSync(fd);
  }
}
