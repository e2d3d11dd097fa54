/**
 * The byte scan that builds a {@link SessionIndex} from a whole session file: lines read last
 * first, each through its skeleton (skeleton.ts), reduced to a small record; the entries the
 * default leaf's context reads are parsed whole on the way.
 */
import { findHeader } from "./header.js";
import { type LineSpan, type LineTable, lineTable } from "./jsonl.js";
import {
  BLANK_LINE,
  INVALID_LINE,
  isObject,
  type Json,
  type LineRecord,
  lineProblem,
  looksTorn,
  parseRecordLine,
  readValueAt,
  recordOf,
} from "./lines.js";
import type { Problem } from "./problems.js";
import { SessionIndex } from "./session-index.js";
import { NOT_JSON, skeletonScanner } from "./skeleton.js";

/** Lines read through the scanner at once: up to this many, and this many bytes (unless one line is longer). */
const BATCH_LINES = 256;
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Decides, during the backward pass, which entries the default leaf's context will read: the
 * path from the last line up, as long as it is inside the last compaction's kept range. The
 * path itself is kept too, so that the default context does not walk the tree again.
 */
class ContextKeeper {
  private wanted: string | undefined;
  private state: "all" | "until" | "none" = "all";
  private keepUntil: unknown;
  /** The records of the walk, leaf first: the default leaf's path, when ids are unique and parents come first. */
  readonly path: LineRecord[] = [];

  /** Called for each record, last to first; true when the record's entry should be kept. */
  offer(record: LineRecord, isLast: boolean): boolean {
    if (isLast) this.wanted = record.id;
    if (record.id === undefined || record.id !== this.wanted) return false;
    this.path.push(record);
    this.wanted = record.parentId ?? undefined;
    // A kept range's system messages give way to the compaction's systemMessage (pi 1.x).
    const keep =
      this.state !== "none" &&
      CONTENT_TYPES.has(record.type ?? "") &&
      !(this.state === "until" && record.type === "message" && record.role === "system");
    if (this.state === "all" && record.type === "compaction") {
      // The last compaction on the path: its kept range is all that precedes it in the context
      // (nothing when it carries retainedTail, or names itself: pi 1.x's compaction that keeps nothing).
      if (record.facts?.hasRetainedTail || record.facts?.firstKeptEntryId === record.id) this.state = "none";
      else {
        this.state = "until";
        this.keepUntil = record.facts?.firstKeptEntryId;
      }
    } else if (this.state === "until" && record.id === this.keepUntil) this.state = "none";
    return keep;
  }
}

/** Types whose full content goes into a context (or edits it). */
const CONTENT_TYPES = new Set(["message", "custom_message", "branch_summary", "compaction", "context_edit"]);

/** The span of line k (0-based), as the problem and record types want it. */
const spanAt = (lines: LineTable, k: number): LineSpan => ({
  line: k + 1,
  offset: lines.offsets[k],
  length: lines.lengths[k],
});

/**
 * Indexes a session file's bytes. Never throws on content: what is wrong is in `problems`.
 *
 * One pass over the lines, last to first, each parsed with `JSON.parse` (so a line is accepted
 * exactly when pi accepts it) and reduced to a small record. Walking backwards, the entries
 * the default leaf's context needs come first (pi's default leaf is the last line, and parents
 * precede their children): those are kept parsed, up to the last compaction's kept range, and
 * everything else is dropped. Reading costs one parse of each line; memory holds the bytes,
 * the records and that one context.
 *
 * Each line is first read through its skeleton (skeleton.ts): the same acceptance and the same
 * record, without making the entry's content into JavaScript values.
 *
 * @example
 * const index = indexSession(bytes);
 * index.defaultLeafId; // the entry pi continues from
 */
export function indexSession(bytes: Uint8Array, options: { wholeLines?: boolean } = {}): SessionIndex {
  const lines = lineTable(bytes);
  const { completeLength } = lines;
  const problems: Problem[] = [];
  if (completeLength < bytes.length) {
    problems.push({
      kind: "unterminated-line",
      offset: completeLength,
      length: bytes.length - completeLength,
      message: "the last line has no newline yet; held back",
    });
  }
  const { header, headerLine, titleLine, problems: headerProblems } = findHeader(bytes);
  problems.push(...headerProblems);
  const hasHeader = header !== undefined;
  // Line indexes the header search consumed (an oh-my-pi title slot is read past).
  const consumed = header && headerLine ? [headerLine - 1] : [];
  if (header && titleLine) consumed.push(titleLine - 1);
  // Values pi's v1 migration counts (the header is 0); numbered once the pass is done.
  const isValue = new Uint8Array(lines.count);
  const reversed: LineRecord[] = [];
  const cache = new Map<number, Json>();
  const keeper = new ContextKeeper();
  // `wholeLines`: parse every line whole (what happens anyway where WebAssembly is missing).
  const scanner = options.wholeLines ? undefined : skeletonScanner();
  // Skeleton values of lines [batchLo, batchHi], read a run at a time (null: read them whole).
  let batch: unknown[] | null = null;
  let batchLo = 0;
  let batchHi = -1;
  const valueAt = (k: number): unknown => {
    if (scanner) {
      if (k < batchLo || k > batchHi) {
        let lo = k;
        const end = lines.offsets[k] + lines.lengths[k];
        while (lo > 0 && k - lo < BATCH_LINES - 1 && end - lines.offsets[lo - 1] <= BATCH_BYTES) lo--;
        batch = scanner.lines(bytes, lines, lo, k) ?? null;
        [batchLo, batchHi] = [lo, k];
      }
      const value = batch ? batch[k - batchLo] : NOT_JSON;
      if (value !== NOT_JSON) return value;
    }
    // Refused by the scanner (invalid, blank, or the file's byte order mark): read whole, as pi does.
    return readValueAt(bytes, lines.offsets[k], lines.lengths[k], k === 0);
  };
  for (let k = lines.count - 1; k >= 0; k--) {
    if (consumed.includes(k)) {
      isValue[k] = k + 1 === headerLine ? 1 : 0;
      continue;
    }
    const offset = lines.offsets[k];
    const length = lines.lengths[k];
    // The skeleton where it can be read (same acceptance, same record); the whole line otherwise.
    const value = valueAt(k);
    if (value === BLANK_LINE) continue;
    if (value === INVALID_LINE) {
      problems.push(
        lineProblem(
          spanAt(lines, k),
          { kind: "invalid", torn: looksTorn(bytes, offset, length) },
          hasHeader,
        ) as Problem,
      );
      continue;
    }
    isValue[k] = 1;
    if (value === null || (hasHeader && isObject(value) && value.type === "session")) {
      problems.push(lineProblem(spanAt(lines, k), { kind: "value", value }, hasHeader) as Problem);
      continue;
    }
    const record = recordOf({ line: k + 1, offset, length }, value, k);
    if (keeper.offer(record, reversed.length === 0)) {
      // The context reads this entry in full.
      cache.set(record.line, (scanner ? readValueAt(bytes, offset, length, k === 0) : value) as Json);
    }
    reversed.push(record);
  }
  // Each record's `value` holds its line index until here: now pi's value count.
  const valueOfLine = new Int32Array(lines.count);
  for (let k = 0, valueIndex = 0; k < lines.count; k++) if (isValue[k]) valueOfLine[k] = valueIndex++;
  for (const record of reversed) record.value = valueOfLine[record.value];
  const records = reversed.reverse();
  problems.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
  return new SessionIndex({
    header,
    headerLine,
    records,
    problems,
    completeLength,
    load: (record) => parseRecordLine(bytes, record),
    cache,
    defaultPath: keeper.path.reverse(),
  });
}
