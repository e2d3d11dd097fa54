/**
 * JSONL framing over bytes.
 *
 * pi writes one JSON value per line, terminated by `\n`. We split on the byte 0x0A only:
 * U+2028/U+2029 are legal inside JSON strings and never end a line (pi's strict framing
 * does the same). A last line without its `\n` may still be in the middle of a write, so it
 * is held back rather than parsed.
 */

/** Where one complete line sits in a byte stream. */
export interface LineSpan {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Length in bytes, without the terminating `\n` (a trailing `\r` is included). */
  length: number;
}

const NEWLINE = 0x0a;

/**
 * Bytes up to and including the last `\n`: the part of a stream made of complete lines.
 *
 * @example completeLength(new TextEncoder().encode('{"a":1}\n{"b"')) // 8
 */
export function completeLength(bytes: Uint8Array): number {
  return bytes.lastIndexOf(NEWLINE) + 1;
}

/** Where the complete lines of `bytes` are: offsets and lengths in typed arrays (no object per line). */
export interface LineTable {
  count: number;
  /** Line k (0-based) is bytes [offsets[k], offsets[k] + lengths[k]), its `\n` excluded. */
  offsets: Float64Array;
  lengths: Float64Array;
  /** Bytes covered by complete lines (see {@link completeLength}). */
  completeLength: number;
}

/** The line table of `bytes`: one pass, nothing copied. */
export function lineTable(bytes: Uint8Array): LineTable {
  let offsets = new Float64Array(1024);
  let lengths = new Float64Array(1024);
  let count = 0;
  let start = 0;
  for (let end = bytes.indexOf(NEWLINE); end >= 0; end = bytes.indexOf(NEWLINE, start)) {
    if (count === offsets.length) {
      const grownOffsets = new Float64Array(count * 2);
      grownOffsets.set(offsets);
      offsets = grownOffsets;
      const grownLengths = new Float64Array(count * 2);
      grownLengths.set(lengths);
      lengths = grownLengths;
    }
    offsets[count] = start;
    lengths[count] = end - start;
    count++;
    start = end + 1;
  }
  return { count, offsets, lengths, completeLength: start };
}

/**
 * Calls `visit` for every complete line of `bytes`, in order, without copying anything.
 * Returns the number of bytes those lines cover (see {@link completeLength}).
 */
export function forEachLine(bytes: Uint8Array, visit: (span: LineSpan) => void, firstLine = 1): number {
  const lines = lineTable(bytes);
  for (let k = 0; k < lines.count; k++) {
    visit({ line: firstLine + k, offset: lines.offsets[k], length: lines.lengths[k] });
  }
  return lines.completeLength;
}

/** Every complete line of `bytes`, as spans. */
export function splitLines(bytes: Uint8Array): LineSpan[] {
  const spans: LineSpan[] = [];
  forEachLine(bytes, (span) => spans.push(span));
  return spans;
}

// A byte order mark is kept: pi trims one at the start of a file only (callers handle that one).
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Decodes UTF-8 as Node's `readFileSync(path, "utf8")` does: broken sequences become U+FFFD,
 * and a byte order mark stays (a line that starts with one is not JSON, for pi as for us).
 */
export function decodeUtf8(bytes: Uint8Array): string {
  return utf8.decode(bytes);
}

const encoder = new TextEncoder();

/** UTF-8 bytes of a string. */
export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}
