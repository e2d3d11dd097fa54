/**
 * The tree index's scan of a file's lines (see wasm/skeleton.c): the lines found and each
 * checked against JSON's grammar as `JSON.parse` checks it, in one pass over the bytes; a valid
 * line comes back as its skeleton, which `JSON.parse` reads to the same record as the line
 * without making the entry's content into JavaScript values. A run of lines is one copy into
 * the scanner's memory, one call, one decode and one `JSON.parse`.
 *
 * The scanner is WebAssembly (SIMD), built from C by scripts/build-wasm.sh, under 4 KB so that
 * browsers compile it synchronously even on their main thread. Where WebAssembly or its SIMD is
 * missing, `skeletonScanner` answers undefined and callers parse whole lines.
 */
import { decodeUtf8 } from "./jsonl.js";
import { SKELETON_WASM } from "./skeleton-wasm.js";
import { RUN_LINES, runEnd, ScanInstance, SLACK } from "./wasm-scan.js";

/** What the scanner hands over for a line that may not be valid JSON (the caller reads it whole). */
export const NOT_JSON: unique symbol = Symbol("not JSON");

/**
 * Called for each line, in file order: its offset, its length (without the `\n`) and its value
 * as the index reads it: for an object, one holding (at least) the members the index reads, as
 * written; any other value as it is; NOT_JSON when the line may not be valid JSON.
 */
export type LineVisitor = (offset: number, length: number, value: unknown) => void;

/** Reads a file's lines through the WebAssembly scan. */
export interface SkeletonScanner {
  /** Visits every line of bytes [start, end), in order: `start` starts a line and `end` is just past a `\n`. */
  scan(bytes: Uint8Array, start: number, end: number, visit: LineVisitor): void;
}

/** The record of a line (wasm/skeleton.c): its start in the run, its length, whether it was accepted. */
const RECORD_INTS = 3;

/**
 * A scanner with its own memory (one per whole-file read: its buffers grow to what it is given
 * and are dropped with it). Undefined where WebAssembly with SIMD is unavailable.
 */
export function skeletonScanner(): SkeletonScanner | undefined {
  const wasm = ScanInstance.of(SKELETON_WASM, RECORD_INTS);
  if (!wasm) return undefined;
  const { recordsAt, inputAt } = wasm;

  /** Scans one run [start, end) (whole lines); returns where it stopped (a line's start). */
  const run = (bytes: Uint8Array, start: number, end: number, visit: LineVisitor): number => {
    const length = end - start;
    // Memory past the records: the run, its slack, the skeletons, the bracket stack.
    const skeletonsAt = inputAt + length + SLACK;
    const stackAt = skeletonsAt + length + 2;
    wasm.reserve(stackAt + length);
    wasm.heap.set(bytes.subarray(start, end), inputAt);
    const count = wasm.scanLines(inputAt, length, recordsAt, RUN_LINES, skeletonsAt, stackAt, wasm.sizesAt);
    const { read, out } = wasm.sizes();
    const { heap, ints } = wasm;
    let skeletons: unknown[] | undefined;
    try {
      skeletons = JSON.parse(decodeUtf8(heap.subarray(skeletonsAt, skeletonsAt + out))) as unknown[];
    } catch {
      // It cannot fail for skeletons the scan accepted; if it did, those lines are read whole.
    }
    for (let i = 0, r = recordsAt >> 2, accepted = 0; i < count; i++, r += RECORD_INTS) {
      const value = ints[r + 2] && skeletons ? skeletons[accepted] : NOT_JSON;
      if (ints[r + 2]) accepted++;
      visit(start + ints[r], ints[r + 1], value);
    }
    return start + read;
  };

  return {
    scan(bytes, start, end, visit) {
      while (start < end) start = run(bytes, start, runEnd(bytes, start, end), visit);
    },
  };
}
