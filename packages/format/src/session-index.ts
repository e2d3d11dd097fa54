/**
 * The tree index of a session file: one small record per line, built without keeping entry
 * content. Full entries are parsed on demand ({@link SessionIndex.entry}), so rebuilding a
 * context reads only the entries on its path.
 */
import { type LineSpan, type LineTable, lineTable } from "./jsonl.js";
import {
  BLANK_LINE,
  INVALID_LINE,
  isHeader,
  isObject,
  type Json,
  type LineRecord,
  lineProblem,
  looksTorn,
  parseRecordLine,
  readValueAt,
  recordOf,
  recordProblem,
} from "./lines.js";
import { CURRENT_SESSION_VERSION, migrateEntry, migrateRole, type V1Links, v1EntryId } from "./migrate.js";
import type { Problem } from "./problems.js";
import type { SessionHeader } from "./schema.js";
import { NOT_JSON, skeletonScanner } from "./skeleton.js";

/** Lines read through the scanner at once: up to this many, and this many bytes (unless one line is longer). */
const BATCH_LINES = 256;
const BATCH_BYTES = 4 * 1024 * 1024;

export type { EntryFacts } from "./lines.js";

/** A line record placed in the index (role migrated, v1 links applied). */
export interface EntryRecord extends LineRecord {
  /** Position in {@link SessionIndex.records}. */
  index: number;
  /** Set for v1 files: the links pi's migration gives this entry. */
  v1?: V1Links;
}

/** What an index is made of: the records of a file's lines and a way to read an entry's content. */
export interface IndexParts {
  /** The header as written, if the file has one. */
  header: SessionHeader | undefined;
  /** The format version, when known without the header (an index rebuilt from stored records). */
  version?: number;
  headerLine?: number;
  /** Records of the lines after the header, in file order; the index takes them over (and numbers them). */
  records: LineRecord[];
  /** Line-level problems already found. */
  problems: readonly Problem[];
  /** Bytes covered by complete lines. */
  completeLength: number;
  /** Parses a record's line (not yet migrated). */
  load: (record: LineRecord) => unknown;
  /** Entries already parsed, by line number (not yet migrated). */
  cache?: Map<number, Json>;
}

/** A session file, indexed. Immutable once built. */
export class SessionIndex {
  /** The header line's JSON, as read (with `version` set to the current one, as pi reports it). */
  readonly header: SessionHeader | undefined;
  /** The header's format version as written (1 when absent). */
  readonly version: number;
  /** Every JSON value after the header but `null`s and extra headers, in file order. */
  readonly records: EntryRecord[];
  readonly problems: Problem[];
  /** Bytes covered by complete lines; anything after is an unterminated line, held back. */
  readonly completeLength: number;
  /** Line number of the header, when there is one. */
  readonly headerLine: number | undefined;
  /** Whether every parent in the file comes before its children (as pi writes): then no parent chain can loop. */
  readonly parentsFirst: boolean;
  private readonly load: (record: LineRecord) => unknown;
  private readonly cache: Map<number, Json>;
  private readonly byIdMap = new Map<string, number>();
  private childrenMap: Map<string | null, number[]> | undefined;

  constructor(parts: IndexParts) {
    this.load = parts.load;
    this.completeLength = parts.completeLength;
    this.headerLine = parts.headerLine;
    this.problems = [...parts.problems];
    const written = parts.header;
    // Without a header, the entries say which version they are: ids mean v2 or later.
    this.version =
      parts.version !== undefined
        ? parts.version
        : written
          ? typeof written.version === "number"
            ? written.version
            : 1
          : parts.records.some((r) => r.id !== undefined)
            ? CURRENT_SESSION_VERSION
            : 1;
    this.header = written ? { ...written, version: CURRENT_SESSION_VERSION } : undefined;
    // The records become the index's own (no copy: there can be millions).
    this.records = parts.records as EntryRecord[];
    for (let index = 0; index < this.records.length; index++) {
      const record = this.records[index];
      record.index = index;
      record.v1 = undefined;
      if (this.version < 3 && record.role !== undefined) record.role = migrateRole(record.role, this.version) as string;
      const problem = recordProblem(record, this.version);
      if (problem) this.problems.push(problem);
    }
    if (this.version < 2) this.migrateV1();
    this.cache = new Map();
    // v1 entries get their ids from the migration above, so nothing parsed before it is kept.
    if (this.version >= 2)
      for (const [line, entry] of parts.cache ?? []) this.cache.set(line, migrateEntry(entry, this.version));
    for (const record of this.records) {
      if (record.id === undefined) continue;
      if (this.byIdMap.has(record.id)) {
        this.problems.push({
          kind: "duplicate-id",
          line: record.line,
          id: record.id,
          message: `id ${record.id} is used again at line ${record.line}; the later line wins`,
        });
      }
      this.byIdMap.set(record.id, record.index);
    }
    let parentsFirst = true;
    for (const record of this.records) {
      if (record.parentId === null) continue;
      const parent = this.byIdMap.get(record.parentId);
      if (parent === undefined) {
        this.problems.push({
          kind: "missing-parent",
          line: record.line,
          id: record.id,
          message: `the parent ${record.parentId} of ${record.id ?? `line ${record.line}`} is not in the file`,
        });
      } else if (parent >= record.index) {
        parentsFirst = false;
      }
    }
    this.parentsFirst = parentsFirst;
  }

  /** pi's v1 → v2 migration, on the records: ids by line, a linear parent chain. */
  private migrateV1(): void {
    const byValue = new Map(this.records.map((r) => [r.value, r]));
    let previous: string | null = null;
    for (const record of this.records) {
      if (!record.isObject) continue;
      const id = v1EntryId(record.line);
      const links: V1Links = { id, parentId: previous };
      const target = record.facts?.firstKeptEntryIndex;
      if (record.type === "compaction" && typeof target === "number") {
        const targetRecord = byValue.get(target);
        // pi reads the target's id while migrating in order: only earlier entries have one yet.
        if (targetRecord && targetRecord.index < record.index && targetRecord.isObject) {
          links.firstKeptEntryId = targetRecord.v1?.id;
        }
      }
      record.id = id;
      record.parentId = previous;
      record.v1 = links;
      previous = id;
    }
  }

  /** The record holding `id` (the last line with that id), if any. */
  byId(id: string): EntryRecord | undefined {
    const at = this.byIdMap.get(id);
    return at === undefined ? undefined : this.records[at];
  }

  /** The parent record of `record`, if it is in the file. */
  parentOf(record: EntryRecord): EntryRecord | undefined {
    return record.parentId === null ? undefined : this.byId(record.parentId);
  }

  /** The value pi continues from on open: the last value in file order, whatever its type. */
  get defaultLeaf(): EntryRecord | undefined {
    return this.records[this.records.length - 1];
  }

  /** The default leaf's id; `null` when the file has no entries or ends with a value that has no id. */
  get defaultLeafId(): string | null {
    return this.defaultLeaf?.id ?? null;
  }

  /**
   * Hands the index entries read elsewhere (by line number, as written): for an index built
   * from stored records, whose lines live in another store.
   */
  prime(entries: Iterable<[line: number, entry: Json]>): void {
    const byLine = new Map(this.records.map((r) => [r.line, r]));
    for (const [line, entry] of entries) {
      const record = byLine.get(line);
      if (record?.isObject) this.cache.set(line, migrateEntry(entry, this.version, record.v1));
    }
  }

  /** The full entry of a record, parsed from its line and migrated to the current version. */
  entry(record: EntryRecord): Json {
    const cached = this.cache.get(record.line);
    if (cached) return cached;
    const value = this.load(record) as Json;
    if (!record.isObject) return value;
    return migrateEntry(value, this.version, record.v1);
  }

  /** Records whose parent is `parentId` (`null`: the roots, including orphans whose parent is missing). */
  children(parentId: string | null): EntryRecord[] {
    if (!this.childrenMap) {
      const map = new Map<string | null, number[]>();
      for (const [, at] of this.byIdMap) {
        const record = this.records[at];
        const key = record.parentId !== null && this.byIdMap.has(record.parentId) ? record.parentId : null;
        const list = map.get(key);
        if (list) list.push(at);
        else map.set(key, [at]);
      }
      for (const list of map.values()) list.sort((a, b) => a - b);
      this.childrenMap = map;
    }
    return (this.childrenMap.get(parentId) ?? []).map((at) => this.records[at]);
  }

  /** Entry ids that are nobody's parent: the tips of branches. */
  leafIds(): string[] {
    // One flag per record (not a set of a million id strings).
    const hasChild = new Uint8Array(this.records.length);
    for (const [, at] of this.byIdMap) {
      const parentId = this.records[at].parentId;
      const parent = parentId === null ? undefined : this.byIdMap.get(parentId);
      if (parent !== undefined) hasChild[parent] = 1;
    }
    const leaves: string[] = [];
    for (const [id, at] of this.byIdMap) if (!hasChild[at]) leaves.push(id);
    return leaves;
  }
}

/**
 * Decides, during the backward pass, which entries the default leaf's context will read: the
 * path from the last line up, as long as it is inside the last compaction's kept range.
 */
class ContextKeeper {
  private wanted: string | undefined;
  private state: "all" | "until" | "none" = "all";
  private keepUntil: unknown;

  /** Called for each record, last to first; true when the record's entry should be kept. */
  offer(record: LineRecord, isLast: boolean): boolean {
    if (isLast) this.wanted = record.id;
    if (record.id === undefined || record.id !== this.wanted) return false;
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
 * The header is the file's first JSON value (pi's rule). oh-my-pi writes a title slot line
 * before it, which oh-my-pi itself reads past: so do we. Returns the line indexes consumed.
 */
function findHeader(
  bytes: Uint8Array,
  lines: LineTable,
  problems: Problem[],
): { header?: SessionHeader; headerLine?: number; consumed: number[] } {
  const valueAt = (from: number): [number, unknown] | undefined => {
    for (let k = from; k < lines.count; k++) {
      const value = readValueAt(bytes, lines.offsets[k], lines.lengths[k], k === 0);
      if (value !== BLANK_LINE && value !== INVALID_LINE) return [k, value];
    }
    return undefined;
  };
  const first = valueAt(0);
  if (!first) return { consumed: [] };
  const [k, value] = first;
  if (isHeader(value)) return { header: value, headerLine: k + 1, consumed: [k] };
  const where = spanAt(lines, k);
  if (isObject(value) && value.type === "title") {
    const next = valueAt(k + 1);
    if (next && isHeader(next[1])) {
      problems.push({ kind: "title-slot", ...where, message: "oh-my-pi title slot before the header; read past" });
      return { header: next[1], headerLine: next[0] + 1, consumed: [k, next[0]] };
    }
  }
  problems.push({ kind: "missing-header", ...where, message: "the file does not start with a session header" });
  return { consumed: [] };
}

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
  const { header, headerLine, consumed } = findHeader(bytes, lines, problems);
  const hasHeader = header !== undefined;
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
  });
}
