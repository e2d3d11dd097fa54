/**
 * A line's skeleton (see wasm/skeleton.c): the line checked against JSON's grammar as
 * `JSON.parse` checks it, and, for a valid entry, only the members the tree index reads.
 * `JSON.parse(skeleton)` gives the same record as `JSON.parse(line)` at a fraction of the cost:
 * most of an entry's bytes and objects (text, tool output, images, content blocks) are never
 * made into JavaScript values.
 *
 * The scanner is WebAssembly (SIMD), built from C by scripts/build-wasm.sh, under 4 KB so that
 * browsers compile it synchronously even on their main thread. Where WebAssembly or its SIMD is
 * missing, `skeletonReader` answers undefined and callers parse whole lines.
 */
import { decodeUtf8 } from "./jsonl.js";
import { SKELETON_WASM } from "./skeleton-wasm.js";

/** What a reader answers for a line that cannot be valid JSON. */
export const NOT_JSON: unique symbol = Symbol("not JSON");

export type SkeletonReader = (bytes: Uint8Array, offset: number, length: number) => string | typeof NOT_JSON;

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

/**
 * A reader with its own memory (one per whole-file read: its buffers grow to the longest line
 * and are dropped with it). Undefined where WebAssembly with SIMD is unavailable.
 */
export function skeletonReader(): SkeletonReader | undefined {
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
  return (bytes, offset, length) => {
    // The input, 16 bytes of slack (the scanner loads 16 at a time), the output, the bracket stack.
    const input = base;
    const output = base + length + 16;
    const stack = output + length;
    const needed = stack + length;
    if (needed > heap.length) {
      memory.grow(Math.ceil((needed - heap.length) / PAGE));
      heap = new Uint8Array(memory.buffer);
    }
    heap.set(bytes.subarray(offset, offset + length), input);
    const written = scan(input, length, output, stack);
    return written < 0 ? NOT_JSON : decodeUtf8(heap.subarray(output, output + written));
  };
}
