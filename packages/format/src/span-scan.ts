/**
 * The light index's scan of a file's lines (wasm/skeleton.c built with SPANS): each line checked
 * against JSON's grammar as `JSON.parse` checks it, and for each accepted one a span record
 * (where the members the index reads are, as byte offsets: no JavaScript value made) and its
 * `id` and `parentId`, the only strings made. A run of lines is one call and one `JSON.parse` of
 * its links. The file is either in memory or read a run at a time straight into the scanner's
 * memory, so that a large file is never held whole.
 */
import { decodeUtf8 } from "./jsonl.js";
import { SPANS_WASM } from "./skeleton-wasm.js";
import { NEWLINE, RUN_BYTES, RUN_LINES, runEnd, ScanInstance, SLACK } from "./wasm-scan.js";

/**
 * The layout of a span record: the line's offset (in the run) and length, whether JSON.parse
 * accepts it, its flags (valid for accepted lines only, as the rest), then the [start, end) of
 * each member value the index reads, relative to the line's start (both 0 when the member is
 * absent), in the order of {@link MEMBER}.
 */
export const SPAN = {
  OFFSET: 0,
  LENGTH: 1,
  ACCEPTED: 2,
  FLAGS: 3,
  /** Index of member `m`'s start (its end follows). */
  member: (m: number) => 4 + 2 * m,
} as const;
/** Ints per span record. */
export const SPAN_INTS = 4 + 2 * 17;
/**
 * Span record flags: an object; an escaped key (the line must be read whole); `message` is an
 * object; odd: a type or role that JSON.parse reads otherwise than its bytes (an escape, a byte
 * over 0x7f), or a `parentId` that is neither a string nor null.
 */
export const SPAN_FLAG = { ENTRY: 1, WHOLE: 2, MESSAGE_OBJECT: 4, ODD: 8 } as const;
/** Member numbers in a span record: the entry's, then its message's. */
export const MEMBER = {
  type: 0,
  id: 1,
  parentId: 2,
  timestamp: 3,
  targetId: 4,
  label: 5,
  name: 6,
  thinkingLevel: 7,
  provider: 8,
  modelId: 9,
  firstKeptEntryId: 10,
  firstKeptEntryIndex: 11,
  message: 12,
  retainedTail: 13,
  role: 14,
  messageProvider: 15,
  messageModel: 16,
} as const;

/** A run of lines as the span scan hands it over. Its views are valid during the call only. */
export interface SpanRun {
  /** The run's bytes. */
  bytes: Uint8Array;
  /** Where the run starts in the file. */
  offset: number;
  /** The lines' span records, SPAN_INTS ints a line (offsets in the run). */
  records: Int32Array;
  count: number;
  /**
   * For each accepted line, in order, two items: its `id` and its `parentId` as JSON.parse reads
   * them (null when absent), except a `parentId` written exactly as the previous accepted line's
   * `id` in the run (and not ""), which is 0.
   */
  links: unknown[];
}

/** Called for each run, in file order; false stops the scan. */
export type SpanVisitor = (run: SpanRun) => boolean;

/** Fills `into[at, at + length)` with the file's bytes from `position`; answers how many it read (0 at the end). */
export type ReadAt = (into: Uint8Array, at: number, length: number, position: number) => number;

/** Reads a file's lines through the span scan. */
export interface SpanScanner {
  /** Visits the runs of bytes [start, end) (`start` starts a line, `end` is just past a `\n`); false when a visit stopped it. */
  scan(bytes: Uint8Array, start: number, end: number, visit: SpanVisitor): boolean;
  /**
   * Visits the runs of a file's bytes from `start` (a line's start) to `end`, read through
   * `read`; a last line without its `\n` is not visited. False when a visit stopped it.
   */
  scanFile(read: ReadAt, start: number, end: number, visit: SpanVisitor): boolean;
}

/**
 * A span scanner with its own memory (one per file read). Undefined where WebAssembly with SIMD
 * is unavailable.
 */
export function spanScanner(): SpanScanner | undefined {
  const wasm = ScanInstance.of(SPANS_WASM, SPAN_INTS);
  if (!wasm) return undefined;
  const { recordsAt, inputAt } = wasm;

  /** Memory past the records for a run region of `capacity` bytes: the run, its slack, the links, the bracket stack. */
  const layout = (capacity: number) => {
    const linksAt = inputAt + capacity + SLACK;
    const stackAt = linksAt + capacity + 10 * RUN_LINES + 2;
    wasm.reserve(stackAt + capacity);
    return { linksAt, stackAt };
  };

  /** Scans the `length` bytes of whole lines at inputAt (a region of `capacity`); returns the run, and the bytes it took. */
  const scanRun = (offset: number, length: number, capacity: number): { run: SpanRun; read: number } => {
    const { linksAt, stackAt } = layout(capacity);
    const count = wasm.scanLines(inputAt, length, recordsAt, RUN_LINES, linksAt, stackAt, wasm.sizesAt);
    const { read, out } = wasm.sizes();
    const { heap, ints } = wasm;
    const links = JSON.parse(decodeUtf8(heap.subarray(linksAt, linksAt + out))) as unknown[];
    const records = ints.subarray(recordsAt >> 2, (recordsAt >> 2) + count * SPAN_INTS);
    return { run: { bytes: heap.subarray(inputAt, inputAt + read), offset, records, count, links }, read };
  };

  return {
    scan(bytes, start, end, visit) {
      while (start < end) {
        const stop = runEnd(bytes, start, end);
        layout(stop - start);
        wasm.heap.set(bytes.subarray(start, stop), inputAt);
        const { run, read } = scanRun(start, stop - start, stop - start);
        if (!visit(run)) return false;
        start += read;
      }
      return true;
    },
    scanFile(read, start, end, visit) {
      // The region holds `filled` bytes of the file from `base`: whole lines, then the start of the next.
      let capacity = RUN_BYTES;
      let filled = 0;
      let base = start;
      while (base + filled < end || filled > 0) {
        layout(capacity);
        const wanted = Math.min(capacity - filled, end - base - filled);
        const got = wanted > 0 ? read(wasm.heap, inputAt + filled, wanted, base + filled) : 0;
        filled += got;
        const last = filled ? wasm.heap.lastIndexOf(NEWLINE, inputAt + filled - 1) : -1;
        if (last < inputAt) {
          // No whole line yet: a line longer than the region, more to read, or the end of the
          // file (an unfinished last line, held back).
          if (filled === capacity) capacity *= 2;
          else if (got === 0) return true;
          continue;
        }
        const { run, read: taken } = scanRun(base, last + 1 - inputAt, capacity);
        if (!visit(run)) return false;
        wasm.heap.copyWithin(inputAt, inputAt + taken, inputAt + filled);
        filled -= taken;
        base += taken;
      }
      return true;
    },
  };
}
