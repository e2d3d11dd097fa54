/**
 * `readSessionFile`: a session file opened from disk as pi opens it, without holding it in
 * memory (Node only: `@pisync/format/file`). The light index reads it a run at a time straight
 * into the scanner's memory; the entries a context reads are read again from the file when it
 * is built, the ranges of one context in as few reads as they make. A file the light index
 * cannot read as pi does is read whole and parsed with `parseSession`.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { type ByteSource, LightIndex } from "./light-index.js";
import { fullSession, lightSession, type ParsedSession } from "./parse.js";

/** The first bytes read for the header (a header line longer than this takes the whole-file reading). */
const HEAD_BYTES = 64 * 1024;
/** Ranges closer than this are read in one read. */
const GAP_BYTES = 64 * 1024;

/** Calls `use` with the file open for reading. */
function withFile<T>(path: string, use: (fd: number) => T): T {
  const fd = openSync(path, "r");
  try {
    return use(fd);
  } finally {
    closeSync(fd);
  }
}

function readAt(fd: number, into: Uint8Array, at: number, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const got = readSync(fd, into, at + done, length - done, position + done);
    if (got === 0) break;
    done += got;
  }
  return done;
}

/** Bytes [offset, offset + length) of the open file `fd`; throws when the file is shorter now than when it was read. */
function readRange(path: string, fd: number, offset: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  if (readAt(fd, bytes, 0, length, offset) < length) throw new Error(`${path} is shorter than it was when read`);
  return bytes;
}

/** A file's bytes, read from disk when asked; what a context prefetched is kept until the next prefetch. */
class FileBytes implements ByteSource {
  private blocks: { offset: number; bytes: Uint8Array }[] = [];
  /** The file while a batch keeps it open (see {@link batch}). */
  private fd: number | undefined;

  constructor(private readonly path: string) {}

  read(offset: number, length: number): Uint8Array {
    for (const block of this.blocks) {
      const from = offset - block.offset;
      if (from >= 0 && from + length <= block.bytes.length) return block.bytes.subarray(from, from + length);
    }
    return this.open((fd) => readRange(this.path, fd, offset, length));
  }

  prefetch(ranges: [offset: number, length: number][]): void {
    const merged: [number, number][] = [];
    for (const [offset, length] of ranges) {
      const last = merged[merged.length - 1];
      if (last && offset - (last[0] + last[1]) <= GAP_BYTES) last[1] = Math.max(last[1], offset + length - last[0]);
      else merged.push([offset, length]);
    }
    this.blocks = this.open((fd) =>
      merged.map(([offset, length]) => ({ offset, bytes: readRange(this.path, fd, offset, length) })),
    );
  }

  /** Runs `use` with the file open: the reads it makes (one per entry, by the thousand) open it no more. */
  batch<T>(use: (fd: number) => T): T {
    return this.open((fd) => {
      const outer = this.fd;
      this.fd = fd;
      try {
        return use(fd);
      } finally {
        this.fd = outer;
      }
    });
  }

  private open<T>(use: (fd: number) => T): T {
    return this.fd === undefined ? withFile(this.path, use) : use(this.fd);
  }
}

/**
 * Opens a session file as pi does on open (`parseSession` of its bytes, same answers), without
 * holding the file in memory when the light index can read it. Reading it throws only what the
 * file system throws (a missing file: ENOENT).
 *
 * @example
 * const session = readSessionFile(path);
 * buildSessionContext(session).messages.length;
 */
export function readSessionFile(path: string): ParsedSession {
  let size = 0;
  const source = new FileBytes(path);
  const light = source.batch((fd) => {
    size = fstatSync(fd).size;
    const head = new Uint8Array(Math.min(size, HEAD_BYTES));
    readAt(fd, head, 0, head.length, 0);
    const read = (into: Uint8Array, at: number, length: number, position: number) =>
      readAt(fd, into, at, length, position);
    return LightIndex.ofFile(head, size, read, source);
  });
  if (!light) return fullSession(readFileSync(path));
  // What needs every entry is read later, from the file as it was opened (pi may have appended since).
  return lightSession(light, () => withFile(path, (fd) => readRange(path, fd, 0, size)));
}
