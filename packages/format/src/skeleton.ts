/**
 * A line's skeleton (see wasm/skeleton.c): the line checked against JSON's grammar as
 * `JSON.parse` checks it, and, for a valid entry, only the members the tree index reads.
 * `JSON.parse(skeleton)` gives the same record as `JSON.parse(line)` at a fraction of the cost:
 * most of an entry's bytes and objects (text, tool output, images, content blocks) are never
 * made into JavaScript values.
 *
 * The scanner is WebAssembly (SIMD), built from C by scripts/build-wasm.sh, under 4 KB so that
 * browsers compile it synchronously even on their main thread. Where WebAssembly or its SIMD is
 * missing, `skeletonScanner` answers undefined and callers parse whole lines.
 */
import { decodeUtf8, type LineTable } from "./jsonl.js";
import { SKELETON_WASM } from "./skeleton-wasm.js";

/** What a reader answers for a line that cannot be valid JSON. */
export const NOT_JSON: unique symbol = Symbol("not JSON");

const PAGE = 65536;

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

/** Skeletons of one line, or of a run of lines at once (one copy, one decode, one parse). */
export interface SkeletonScanner {
  /** The skeleton of bytes [offset, offset + length). */
  line(bytes: Uint8Array, offset: number, length: number): string | typeof NOT_JSON;
  /**
   * The values of lines lo..hi of `table`, parsed from their skeletons in one JSON.parse;
   * NOT_JSON for a line the scanner refused. Undefined if that parse fails (it cannot for
   * skeletons the scanner accepted): read the lines one by one then.
   */
  lines(bytes: Uint8Array, table: LineTable, lo: number, hi: number): (unknown | typeof NOT_JSON)[] | undefined;
}

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
  const scan = instance.exports.skeleton as (input: number, length: number, output: number, stack: number) => number;
  const base = (instance.exports.__heap_base as WebAssembly.Global).value as number;
  let heap = new Uint8Array(memory.buffer);
  const reserve = (bytes: number) => {
    if (bytes > heap.length) {
      memory.grow(Math.ceil((bytes - heap.length) / PAGE));
      heap = new Uint8Array(memory.buffer);
    }
  };
  return {
    line(bytes, offset, length) {
      // The input, 16 bytes of slack (the scanner loads 16 at a time), the output, the bracket stack.
      const output = base + length + 16;
      const stack = output + length;
      reserve(stack + length);
      heap.set(bytes.subarray(offset, offset + length), base);
      const written = scan(base, length, output, stack);
      return written < 0 ? NOT_JSON : decodeUtf8(heap.subarray(output, output + written));
    },
    lines(bytes, { offsets, lengths }, lo, hi) {
      // The lines are contiguous in the file: one copy. Output: "[" skeleton "," ... "]", with 0
      // in place of a refused line (a skeleton is never longer than its line).
      const start = offsets[lo];
      const size = offsets[hi] + lengths[hi] - start;
      let longest = 0;
      for (let j = lo; j <= hi; j++) longest = Math.max(longest, lengths[j]);
      const output = base + size + 16;
      const stack = output + size + 2 * (hi - lo + 1) + 2;
      reserve(stack + longest);
      heap.set(bytes.subarray(start, start + size), base);
      let at = output;
      heap[at++] = 0x5b;
      const refused: number[] = [];
      for (let j = lo; j <= hi; j++) {
        if (j > lo) heap[at++] = 0x2c;
        const written = scan(base + offsets[j] - start, lengths[j], at, stack);
        if (written < 0) {
          refused.push(j - lo);
          heap[at++] = 0x30;
        } else {
          at += written;
        }
      }
      heap[at++] = 0x5d;
      let values: unknown[];
      try {
        values = JSON.parse(decodeUtf8(heap.subarray(output, at))) as unknown[];
      } catch {
        return undefined;
      }
      for (const j of refused) values[j] = NOT_JSON;
      return values;
    },
  };
}
