/**
 * What the two WebAssembly scans of wasm/skeleton.c share (the skeleton scan of skeleton.ts, the
 * span scan of span-scan.ts): each module compiled once per process, an instance with its own
 * memory per file read, and the cutting of a file into runs of whole lines.
 */

/** Bytes handed to one call of a scan (fewer or more to end on a line's end): a run stays in the CPU's cache. */
export const RUN_BYTES = 1024 * 1024;
/** Lines one call of a scan reports at most. */
export const RUN_LINES = 4096;
/** Readable bytes a scan may load past a run's end (one SIMD load). */
export const SLACK = 16;
export const NEWLINE = 0x0a;
const PAGE = 65536;

/** `scan_lines` of wasm/skeleton.c: addresses in the instance's memory; returns the lines read. */
export type ScanLines = (
  input: number,
  length: number,
  records: number,
  max: number,
  out: number,
  stack: number,
  sizes: number,
) => number;

function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const modules = new Map<string, WebAssembly.Module | null>();

/** A scan's module, compiled once per process; null where WebAssembly (or its SIMD) is missing. */
function compiled(base64: string): WebAssembly.Module | null {
  let module = modules.get(base64);
  if (module === undefined) {
    try {
      module = new WebAssembly.Module(decodeBase64(base64) as BufferSource);
    } catch {
      module = null;
    }
    modules.set(base64, module);
  }
  return module;
}

/**
 * An instance of a scan with its own memory: the records of a run (room for `RUN_LINES` records
 * of `recordInts` ints) and two sizes, then from `inputAt` what the caller lays out per run (the
 * run, its slack, the output, the bracket stack). Its buffers grow to what it is given and are
 * dropped with it.
 */
export class ScanInstance {
  readonly scanLines: ScanLines;
  /** All of the module's exports. */
  readonly exports: WebAssembly.Exports;
  readonly recordsAt: number;
  readonly sizesAt: number;
  readonly inputAt: number;
  /** Views of the memory (new ones after it grows). */
  heap: Uint8Array;
  ints: Int32Array;

  private constructor(
    private readonly memory: WebAssembly.Memory,
    instance: WebAssembly.Instance,
    recordInts: number,
  ) {
    this.exports = instance.exports;
    this.scanLines = instance.exports.scan_lines as ScanLines;
    this.recordsAt = (instance.exports.__heap_base as WebAssembly.Global).value as number;
    this.sizesAt = this.recordsAt + RUN_LINES * recordInts * 4;
    this.inputAt = this.sizesAt + 16;
    this.heap = new Uint8Array(memory.buffer);
    this.ints = new Int32Array(memory.buffer);
  }

  /** An instance of the module in `base64`; undefined where it cannot run. */
  static of(base64: string, recordInts: number): ScanInstance | undefined {
    const module = compiled(base64);
    if (!module) return undefined;
    const memory = new WebAssembly.Memory({ initial: 2 });
    try {
      return new ScanInstance(memory, new WebAssembly.Instance(module, { env: { memory } }), recordInts);
    } catch {
      return undefined;
    }
  }

  /** Makes the memory at least `bytes` long. */
  reserve(bytes: number): void {
    if (bytes > this.heap.length) {
      this.memory.grow(Math.ceil((bytes - this.heap.length) / PAGE));
      this.heap = new Uint8Array(this.memory.buffer);
      this.ints = new Int32Array(this.memory.buffer);
    }
  }

  /** Bytes read by the last call (whole lines), and the length of its output. */
  sizes(): { read: number; out: number } {
    return { read: this.ints[this.sizesAt >> 2], out: this.ints[(this.sizesAt >> 2) + 1] };
  }
}

/**
 * Where the run of whole lines that starts at `start` ends in bytes [start, end): at the last
 * line end within RUN_BYTES, or at the first line's end when that line is longer (`end` is
 * just past a `\n`).
 */
export function runEnd(bytes: Uint8Array, start: number, end: number): number {
  const stop = start + RUN_BYTES >= end ? end : bytes.lastIndexOf(NEWLINE, start + RUN_BYTES - 1) + 1;
  return stop > start ? stop : bytes.indexOf(NEWLINE, start) + 1;
}
