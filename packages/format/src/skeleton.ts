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

const PAGE = 65536;
const NEWLINE = 0x0a;
/** Bytes handed to one call of the scan (fewer or more to end on a line's end): a run stays in the CPU's cache. */
const RUN_BYTES = 1024 * 1024;
/** Lines one call of the scan reports at most. */
const RUN_LINES = 4096;
/** The record of a line (wasm/skeleton.c): its start in the run, its length, whether it was accepted. */
const RECORD_INTS = 3;
/** Readable bytes the scan may load past a run's end (one SIMD load). */
const SLACK = 16;

function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

let module: WebAssembly.Module | null | undefined;

/** The compiled scanner, once per process; null where it cannot run. */
function compiled(): WebAssembly.Module | null {
  if (module === undefined) {
    try {
      module = new WebAssembly.Module(decodeBase64(SKELETON_WASM) as BufferSource);
    } catch {
      module = null;
    }
  }
  return module;
}

type ScanLines = (
  input: number,
  length: number,
  records: number,
  max: number,
  skeletons: number,
  stack: number,
  sizes: number,
) => number;

/**
 * A scanner with its own memory (one per whole-file read: its buffers grow to what it is given
 * and are dropped with it). Undefined where WebAssembly with SIMD is unavailable.
 */
export function skeletonScanner(): SkeletonScanner | undefined {
  const wasm = compiled();
  if (!wasm) return undefined;
  const memory = new WebAssembly.Memory({ initial: 2 });
  let instance: WebAssembly.Instance;
  try {
    instance = new WebAssembly.Instance(wasm, { env: { memory } });
  } catch {
    return undefined;
  }
  const scanLines = instance.exports.scan_lines as ScanLines;
  // Memory: the records and their two sizes, then a run, its slack, the skeletons, the bracket stack.
  const recordsAt = (instance.exports.__heap_base as WebAssembly.Global).value as number;
  const sizesAt = recordsAt + RUN_LINES * RECORD_INTS * 4;
  const inputAt = sizesAt + 16;
  let heap = new Uint8Array(memory.buffer);
  let ints = new Int32Array(memory.buffer);
  const reserve = (bytes: number) => {
    if (bytes > heap.length) {
      memory.grow(Math.ceil((bytes - heap.length) / PAGE));
      heap = new Uint8Array(memory.buffer);
      ints = new Int32Array(memory.buffer);
    }
  };

  /** Scans one run [start, end) (whole lines); returns where it stopped (a line's start). */
  const run = (bytes: Uint8Array, start: number, end: number, visit: LineVisitor): number => {
    const length = end - start;
    const skeletonsAt = inputAt + length + SLACK;
    const stackAt = skeletonsAt + length + 2;
    reserve(stackAt + length);
    heap.set(bytes.subarray(start, end), inputAt);
    const count = scanLines(inputAt, length, recordsAt, RUN_LINES, skeletonsAt, stackAt, sizesAt);
    const read = ints[sizesAt >> 2];
    const skeletonsLength = ints[(sizesAt >> 2) + 1];
    let skeletons: unknown[] | undefined;
    try {
      skeletons = JSON.parse(decodeUtf8(heap.subarray(skeletonsAt, skeletonsAt + skeletonsLength))) as unknown[];
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
      while (start < end) {
        // A run ends at the last line end within RUN_BYTES, or at the first line's end when that line is longer.
        let stop = start + RUN_BYTES >= end ? end : bytes.lastIndexOf(NEWLINE, start + RUN_BYTES - 1) + 1;
        if (stop <= start) stop = bytes.indexOf(NEWLINE, start) + 1;
        start = run(bytes, start, stop, visit);
      }
    },
  };
}
