/**
 * The byte scan that builds a {@link SessionIndex} from a whole session file: each line through
 * the WebAssembly scan (skeleton.ts), reduced to a small record; then the entries the default
 * leaf's context reads, found walking up from the last line, are parsed whole.
 */
import { findHeader } from "./header.js";
import { completeLength, forEachLine } from "./jsonl.js";
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

/**
 * Decides, walking the records from the last one up, which entries the default leaf's context
 * will read: the path from the last line up, as long as it is inside the last compaction's kept
 * range. The path itself is kept too, so that the default context does not walk the tree again.
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

/**
 * Indexes a session file's bytes. Never throws on content: what is wrong is in `problems`.
 *
 * One pass over the lines, each accepted exactly when `JSON.parse` accepts it (pi's rule) and
 * reduced to a small record. Each line goes through the WebAssembly scan (skeleton.ts): the
 * same acceptance and the same record, without making the entry's content into JavaScript
 * values. Then the records are walked from the last one up (pi's default leaf is the last
 * line, and parents precede their children): the entries the default leaf's context needs
 * come first on that walk, up to the last compaction's kept range, and are the only ones
 * parsed whole. Memory holds the bytes, the records and that one context.
 *
 * @example
 * const index = indexSession(bytes);
 * index.defaultLeafId; // the entry pi continues from
 */
export function indexSession(bytes: Uint8Array, options: { wholeLines?: boolean } = {}): SessionIndex {
  const complete = completeLength(bytes);
  const problems: Problem[] = [];
  if (complete < bytes.length) {
    problems.push({
      kind: "unterminated-line",
      offset: complete,
      length: bytes.length - complete,
      message: "the last line has no newline yet; held back",
    });
  }
  const { header, headerLine, titleLine, problems: headerProblems } = findHeader(bytes);
  problems.push(...headerProblems);
  const hasHeader = header !== undefined;
  // The lines the header search consumed (an oh-my-pi title slot is read past): 1-based, 0 for none.
  const skipHeader = header ? (headerLine ?? 0) : 0;
  const skipTitle = header ? (titleLine ?? 0) : 0;
  const records: LineRecord[] = [];
  let line = 0;
  // pi's count of the values in the file (the header is 0): its v1 migration numbers them.
  let values = 0;
  const visit = (offset: number, length: number, scanned: unknown) => {
    line++;
    if (line === skipHeader || line === skipTitle) {
      if (line === skipHeader) values++;
      return;
    }
    // Refused by the scan (invalid, blank, or the file's byte order mark): read whole, as pi does.
    const value = scanned === NOT_JSON ? readValueAt(bytes, offset, length, offset === 0) : scanned;
    if (value === BLANK_LINE) return;
    const span = { line, offset, length };
    if (value === INVALID_LINE) {
      problems.push(
        lineProblem(span, { kind: "invalid", torn: looksTorn(bytes, offset, length) }, hasHeader) as Problem,
      );
      return;
    }
    const valueIndex = values++;
    if (value === null || (hasHeader && isObject(value) && value.type === "session")) {
      problems.push(lineProblem(span, { kind: "value", value }, hasHeader) as Problem);
      return;
    }
    records.push(recordOf(span, value, valueIndex));
  };
  // `wholeLines`: parse every line whole (what happens anyway where WebAssembly is missing).
  const scanner = options.wholeLines ? undefined : skeletonScanner();
  if (scanner) scanner.scan(bytes, 0, complete, visit);
  else forEachLine(bytes, ({ offset, length }) => visit(offset, length, NOT_JSON));
  // The walk from the default leaf up: the entries its context reads are parsed whole.
  const keeper = new ContextKeeper();
  const cache = new Map<number, Json>();
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    if (keeper.offer(record, i === records.length - 1)) {
      cache.set(record.line, readValueAt(bytes, record.offset, record.length, record.offset === 0) as Json);
    }
  }
  problems.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
  return new SessionIndex({
    header,
    headerLine,
    records,
    problems,
    completeLength: complete,
    load: (record) => parseRecordLine(bytes, record),
    cache,
    defaultPath: keeper.path.reverse(),
  });
}
