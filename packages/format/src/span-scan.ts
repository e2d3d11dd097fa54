/**
 * The light index's scan of a file's lines (wasm/skeleton.c built with SPANS): each line checked
 * against JSON's grammar as `JSON.parse` checks it, and for each accepted one a span record:
 * where the members the light index reads are (byte offsets: no JavaScript value made), the
 * hashes of its id and parent id, the codes of its type and role. Then each run's entries are
 * linked to their parents in the scanner's memory (a table of id hashes). The file is either in
 * memory or read a run at a time straight into the scanner's memory, so that a large file is
 * never held whole.
 */
import { encodeUtf8 } from "./jsonl.js";
import { SPANS_WASM } from "./skeleton-wasm.js";
import { NEWLINE, RUN_BYTES, RUN_LINES, runEnd, ScanInstance, SLACK } from "./wasm-scan.js";

/**
 * The layout of a span record: the line's offset (in the run) and length, whether JSON.parse
 * accepts it, its flags (valid for accepted lines only, as the rest), the [start, end) of each
 * member value the light index reads, relative to the line's start (both 0 when the member is
 * absent), in the order of {@link MEMBER}; the hashes (low, high int) of its id and parent id
 * (FNV-1a, 64 bits, of their text); the codes of its type and role (type | role << 8: 1 + their
 * place in the scan's names, 255 another string, 0 none).
 */
export const SPAN = {
  OFFSET: 0,
  LENGTH: 1,
  ACCEPTED: 2,
  FLAGS: 3,
  /** Index of member `m`'s start (its end follows). */
  member: (m: number) => 4 + 2 * m,
  ID_HASH: 38,
  PARENT_HASH: 40,
  CODES: 42,
} as const;
/** Ints per span record. */
export const SPAN_INTS = 43;
/**
 * Span record flags: an object; an escaped key (the line must be read whole); `message` is an
 * object; odd: the light index cannot read the line (a type or id that is not a plain string, a
 * parent id neither null nor a plain string, a role string that is not plain; plain: ASCII
 * without escapes, whose bytes are its text); the parent id is written as the previous
 * accepted line's id; there is no parent id (absent, null or ""); `message` is neither absent
 * nor null.
 */
export const SPAN_FLAG = {
  ENTRY: 1,
  WHOLE: 2,
  MESSAGE_OBJECT: 4,
  ODD: 8,
  PARENT_PREVIOUS: 16,
  PARENT_NONE: 32,
  HAS_MESSAGE: 64,
} as const;
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
}

const TWO_32 = 2 ** 32;

/**
 * The scan's hash of an id or parent id (FNV-1a, 64 bits, of its text's UTF-8 bytes), as
 * [low, high] ints.
 */
export function textHash(text: string): [low: number, high: number] {
  let low = 0x84222325;
  let high = 0xcbf29ce4;
  for (const byte of encodeUtf8(text)) {
    low = (low ^ byte) >>> 0;
    // × 0x100000001b3 (mod 2^64) is × 0x1b3, plus the low word shifted 40 bits up.
    const product = low * 0x1b3;
    high = (high * 0x1b3 + Math.floor(product / TWO_32) + ((low << 8) >>> 0)) % TWO_32;
    low = product % TWO_32;
  }
  return [low | 0, high | 0];
}

/** Called for each run, in file order; false stops the scan. */
export type SpanVisitor = (run: SpanRun) => boolean;

/** Fills `into[at, at + length)` with the file's bytes from `position`; answers how many it read (0 at the end). */
export type ReadAt = (into: Uint8Array, at: number, length: number, position: number) => number;

/** Reads a file's lines through the span scan, and links its entries. */
export interface SpanScanner {
  /** Visits the runs of bytes [start, end) (`start` starts a line, `end` is just past a `\n`); false when a visit stopped it. */
  scan(bytes: Uint8Array, start: number, end: number, visit: SpanVisitor): boolean;
  /**
   * Visits the runs of a file's bytes from `start` (a line's start) to `end`, read through
   * `read`; a last line without its `\n` is not visited. False when a visit stopped it.
   */
  scanFile(read: ReadAt, start: number, end: number, visit: SpanVisitor): boolean;
  /**
   * Links the lines of the run being visited as the next entries (every line must be an entry
   * the light index reads): each to its parent, by id hash. Answers the entries whose parent
   * was looked up by hash (not written as the previous line's id), for the caller to check;
   * undefined when the run holds a line the light index cannot read, or an id hash already
   * linked (a repeated id, or two ids of one hash).
   */
  link(): Int32Array | undefined;
  /** Each linked entry's parent: an entry, -1 for none, -2 for one not linked yet (valid until the next link). */
  parents(count: number): Int32Array;
  /** The links of the `count` entries linked, copied out of the scanner's memory: the scanner can then be dropped. */
  links(count: number): LinkTable;
}

/**
 * The links of a scanned file, held apart from the scanner (whose memory is as large as the file's
 * longest line, and of which a process can hold only so many): each entry's parent, and its id
 * hash in an open-addressing table, as `find_id` of wasm/skeleton.c reads it.
 */
export class LinkTable {
  constructor(
    /** Each entry's id hash (low, high). */
    private readonly hashes: Int32Array,
    /** Entry + 1 per slot (0: empty); a power of two long, or empty. */
    private readonly table: Uint32Array,
    /** Each entry's parent: an entry, -1 for none, -2 for one not linked yet. */
    readonly parents: Int32Array,
  ) {}

  /** The entry whose id hash is (low, high), or -1. */
  find(low: number, high: number): number {
    const mask = this.table.length - 1;
    if (mask < 0) return -1;
    for (let s = (low ^ high) & mask; this.table[s]; s = (s + 1) & mask) {
      const k = this.table[s] - 1;
      if (this.hashes[2 * k] === low && this.hashes[2 * k + 1] === high) return k;
    }
    return -1;
  }
}

/**
 * A span scanner with its own memory (one per file read). Undefined where WebAssembly with SIMD
 * is unavailable, or where the module is too large to compile synchronously.
 */
export function spanScanner(): SpanScanner | undefined {
  const wasm = ScanInstance.of(SPANS_WASM, SPAN_INTS);
  if (!wasm) return undefined;
  const { recordsAt, inputAt } = wasm;
  const exports = wasm.exports as {
    link_run(
      records: number,
      count: number,
      first: number,
      hashes: number,
      table: number,
      mask: number,
      parents: number,
      looked: number,
    ): number;
    fill_table(count: number, hashes: number, table: number, mask: number): void;
  };
  /** The run region's capacity, and where it ends (the links block starts there or later). */
  let scratchEnd = inputAt;
  /**
   * The links block: for `capacity` entries, their id hashes (8 bytes each), parents (4), the
   * table (4 a slot, at least twice as many slots), and a list of a run's looked-up entries.
   */
  type Block = { at: number; capacity: number; slots: number };
  let block: Block = { at: 0, capacity: 0, slots: 0 };
  const parentsOf = (b: Block) => b.at + 8 * b.capacity;
  const tableOf = (b: Block) => parentsOf(b) + 4 * b.capacity;
  const lookedOf = (b: Block) => tableOf(b) + 4 * b.slots;
  const endOf = (b: Block) => lookedOf(b) + 4 * RUN_LINES;

  /** Room for `entries` linked entries (`kept` of them linked already), past the run region. */
  const reserveBlock = (entries: number, kept: number) => {
    if (entries <= block.capacity && block.at >= scratchEnd) return;
    const old = block;
    // A block moved past a grown run region keeps its size; one that is full doubles.
    const capacity = entries <= old.capacity ? old.capacity : Math.max(entries, 2 * old.capacity, 1024);
    let slots = 1024;
    while (slots < 2 * capacity) slots *= 2;
    // Past the run region and the old block (8-byte aligned); what is linked moves there.
    const at = Math.ceil(Math.max(scratchEnd, old.at ? endOf(old) : 0) / 8) * 8;
    block = { at, capacity, slots };
    wasm.reserve(endOf(block));
    wasm.heap.fill(0, tableOf(block), lookedOf(block));
    if (kept) {
      wasm.heap.copyWithin(block.at, old.at, old.at + 8 * kept);
      wasm.heap.copyWithin(parentsOf(block), parentsOf(old), parentsOf(old) + 4 * kept);
      exports.fill_table(kept, block.at, tableOf(block), slots - 1);
    }
  };

  /** Entries linked so far, and the lines of the run last scanned. */
  let linked = 0;
  let scanned = 0;

  /**
   * Memory past the records for a run region of `capacity` bytes: the run, its slack, an output,
   * the bracket stack. The region only grows (a run at least RUN_BYTES); when it grows, the links
   * block moves past it first, before anything is written there.
   */
  const layout = (capacity: number) => {
    const size = Math.max(capacity, RUN_BYTES);
    const outAt = inputAt + size + SLACK;
    const stackAt = outAt + 16;
    if (stackAt + size > scratchEnd) {
      scratchEnd = stackAt + size;
      wasm.reserve(scratchEnd);
      if (block.capacity) reserveBlock(block.capacity, linked);
    }
    return { outAt, stackAt };
  };

  /** Scans the `length` bytes of whole lines at inputAt (a region of `capacity`); returns the run, and the bytes it took. */
  const scanRun = (offset: number, length: number, capacity: number): { run: SpanRun; read: number } => {
    const { outAt, stackAt } = layout(capacity);
    const count = wasm.scanLines(inputAt, length, recordsAt, RUN_LINES, outAt, stackAt, wasm.sizesAt);
    scanned = count;
    // Room to link this run now: the memory does not grow (and the run's views stay valid) until the next run.
    reserveBlock(linked + count, linked);
    const { read } = wasm.sizes();
    const records = wasm.ints.subarray(recordsAt >> 2, (recordsAt >> 2) + count * SPAN_INTS);
    return { run: { bytes: wasm.heap.subarray(inputAt, inputAt + read), offset, records, count }, read };
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
    link() {
      const b = block;
      const args = [recordsAt, scanned, linked, b.at, tableOf(b), b.slots - 1, parentsOf(b), lookedOf(b)] as const;
      const looked = exports.link_run(...args);
      linked += scanned;
      return looked < 0 ? undefined : wasm.ints.subarray(lookedOf(b) >> 2, (lookedOf(b) >> 2) + looked);
    },
    parents(count) {
      return wasm.ints.subarray(parentsOf(block) >> 2, (parentsOf(block) >> 2) + count);
    },
    links(count) {
      const hashes = wasm.ints.slice(block.at >> 2, (block.at >> 2) + 2 * count);
      const table = new Uint32Array(wasm.heap.slice(tableOf(block), lookedOf(block)).buffer);
      return new LinkTable(hashes, table, this.parents(count).slice());
    },
  };
}
