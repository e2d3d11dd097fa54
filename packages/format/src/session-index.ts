/**
 * The tree index of a session file: one small record per line, built without parsing entry
 * content. Full entries are parsed on demand ({@link SessionIndex.entry}), so rebuilding a
 * context reads only the entries on its path.
 */
import { decodeUtf8, forEachLine } from "./jsonl.js";
import { CURRENT_SESSION_VERSION, migrateEntry, migrateRole, type V1Links, v1EntryId } from "./migrate.js";
import type { Problem } from "./problems.js";
import { type Envelope, scanLine } from "./scan.js";
import type { SessionHeader } from "./schema.js";

/** One JSON value after the header, in file order. */
export interface EntryRecord {
  /** Position in {@link SessionIndex.records}. */
  index: number;
  line: number;
  offset: number;
  length: number;
  /** Whether the value is a JSON object (anything else can still be pi's leaf, and is junk). */
  isObject: boolean;
  type: string | undefined;
  /** The entry id, after migration (v1 entries get {@link v1EntryId}). */
  id: string | undefined;
  /** The parent id; `null` for a root. */
  parentId: string | null;
  timestamp: string | undefined;
  /** `message.role` of a message entry, after migration. */
  role: string | undefined;
  /** The scalar fields captured while scanning. */
  envelope: Envelope | undefined;
  /** Set for v1 files: the links pi's migration gives this entry. */
  v1: V1Links | undefined;
}

const TORN_MARKER = new TextEncoder().encode('{"type":"');

function containsAfterStart(bytes: Uint8Array, start: number, end: number, needle: Uint8Array): boolean {
  let from = start + 1;
  for (;;) {
    const at = bytes.indexOf(needle[0], from);
    if (at < 0 || at + needle.length > end) return false;
    let k = 1;
    while (k < needle.length && bytes[at + k] === needle[k]) k++;
    if (k === needle.length) return true;
    from = at + 1;
  }
}

function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function isHeader(env: Envelope): boolean {
  return env.type === "session" && typeof env.id === "string";
}

/** A session file, indexed. Immutable once built. */
export class SessionIndex {
  /** The header line's JSON, as read (with `version` set to the current one, as pi reports it). */
  header: SessionHeader | undefined = undefined;
  /** The header's format version as written (1 when absent). */
  version = 1;
  /** Every JSON value after the header but `null`s and extra headers, in file order. */
  readonly records: EntryRecord[] = [];
  readonly problems: Problem[] = [];
  /** Bytes covered by complete lines; anything after is an unterminated line, held back. */
  completeLength = 0;
  /** Line number of the header, when there is one. */
  headerLine: number | undefined = undefined;
  private readonly byIdMap = new Map<string, number>();
  private childrenMap: Map<string | null, number[]> | undefined;

  constructor(readonly bytes: Uint8Array) {
    this.build();
  }

  private build(): void {
    const bytes = this.bytes;
    let seenFirstValue = false;
    let pendingTitleSlot: { line: number; offset: number; length: number } | undefined;
    // Index among the file's parsed values, as pi's migration counts them (header = 0).
    let valueIndex = 0;
    const recordByValueIndex = new Map<number, number>();
    // A UTF-8 byte order mark at the very start is trimmed by pi (String.prototype.trim).
    const bomLength = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;

    this.completeLength = forEachLine(bytes, (span) => {
      const start = span.offset === 0 ? bomLength : span.offset;
      const end = span.offset + span.length;
      if (isBlank(bytes, start, end)) return;
      const scanned = scanLine(bytes, start, end);
      const where = { line: span.line, offset: span.offset, length: span.length };
      if (scanned.kind === "invalid") {
        const torn = containsAfterStart(bytes, start, end, TORN_MARKER);
        this.problems.push({
          kind: torn ? "torn-line" : "invalid-json",
          ...where,
          message: torn
            ? `line ${span.line} is a torn write with another entry glued onto it; skipped`
            : `line ${span.line} is not valid JSON (at byte ${scanned.at - span.offset}); skipped`,
        });
        return;
      }
      const currentValueIndex = valueIndex++;
      if (!seenFirstValue) {
        seenFirstValue = true;
        if (scanned.kind === "object" && isHeader(scanned.envelope)) {
          this.acceptHeader(span.line, start, end, scanned.envelope);
          return;
        }
        if (scanned.kind === "object" && scanned.envelope.type === "title") {
          // oh-my-pi's fixed-width title slot precedes the header; oh-my-pi reads past it.
          pendingTitleSlot = where;
          valueIndex = 0;
          return;
        }
        this.problems.push({
          kind: "missing-header",
          ...where,
          message: "the file does not start with a session header",
        });
      } else if (pendingTitleSlot) {
        const slot = pendingTitleSlot;
        pendingTitleSlot = undefined;
        if (scanned.kind === "object" && isHeader(scanned.envelope)) {
          this.problems.push({
            kind: "title-slot",
            ...slot,
            message: "oh-my-pi title slot before the header; read past",
          });
          this.acceptHeader(span.line, start, end, scanned.envelope);
          return;
        }
        this.problems.push({
          kind: "missing-header",
          ...slot,
          message: "the file does not start with a session header",
        });
      }
      if (scanned.kind === "null") {
        this.problems.push({ kind: "not-an-entry", ...where, message: `line ${span.line} is null; skipped` });
        return;
      }
      if (scanned.kind === "object" && scanned.envelope.type === "session" && this.header) {
        this.problems.push({
          kind: "extra-header",
          ...where,
          message: `line ${span.line} is a second session header; ignored`,
        });
        return;
      }
      const env = scanned.kind === "object" ? scanned.envelope : undefined;
      const record: EntryRecord = {
        index: this.records.length,
        ...where,
        isObject: env !== undefined,
        type: asString(env?.type),
        id: asString(env?.id),
        parentId: asString(env?.parentId) || null,
        timestamp: asString(env?.timestamp),
        role: undefined,
        envelope: env,
        v1: undefined,
      };
      if (!record.type || (record.id === undefined && this.version >= 2)) {
        this.problems.push({
          kind: "not-an-entry",
          ...where,
          message: `line ${span.line} is not an entry (no type or id)`,
        });
      }
      recordByValueIndex.set(currentValueIndex, record.index);
      this.records.push(record);
    });

    if (pendingTitleSlot) {
      this.problems.push({
        kind: "missing-header",
        ...pendingTitleSlot,
        message: "the file has a title slot but no header",
      });
    }
    if (this.completeLength < bytes.length) {
      this.problems.push({
        kind: "unterminated-line",
        offset: this.completeLength,
        length: bytes.length - this.completeLength,
        message: "the last line has no newline yet; held back",
      });
    }
    // Without a header, the entries say which version they are: ids mean v2 or later.
    if (!this.header && this.records.some((r) => r.id !== undefined)) this.version = CURRENT_SESSION_VERSION;
    if (this.version < 2) this.migrateV1(recordByValueIndex);
    for (const record of this.records) {
      if (record.envelope && record.type === "message")
        record.role = asString(migrateRole(record.envelope.role, this.version));
      if (record.id !== undefined) {
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
    }
    for (const record of this.records) {
      if (record.parentId !== null && !this.byIdMap.has(record.parentId)) {
        this.problems.push({
          kind: "missing-parent",
          line: record.line,
          id: record.id,
          message: `the parent ${record.parentId} of ${record.id ?? `line ${record.line}`} is not in the file`,
        });
      }
    }
  }

  private acceptHeader(line: number, start: number, end: number, env: Envelope): void {
    const header = JSON.parse(decodeUtf8(this.bytes.subarray(start, end))) as SessionHeader;
    this.version = typeof env.version === "number" ? env.version : 1;
    this.header = { ...header, version: CURRENT_SESSION_VERSION };
    this.headerLine = line;
  }

  /** pi's v1 → v2 migration, on the records: ids by line, a linear parent chain. */
  private migrateV1(recordByValueIndex: Map<number, number>): void {
    let previous: string | null = null;
    for (const record of this.records) {
      if (!record.isObject) continue;
      const id = v1EntryId(record.line);
      const links: V1Links = { id, parentId: previous };
      const target = record.envelope?.firstKeptEntryIndex;
      if (record.type === "compaction" && typeof target === "number") {
        const targetRecord = recordByValueIndex.get(target);
        // pi reads the target's id while migrating in order: only earlier entries have one yet.
        if (targetRecord !== undefined && targetRecord < record.index && this.records[targetRecord].isObject) {
          links.firstKeptEntryId = this.records[targetRecord].v1?.id;
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

  /** The full entry of a record, parsed from its line and migrated to the current version. */
  entry(record: EntryRecord): Record<string, unknown> {
    const value = JSON.parse(decodeUtf8(this.bytes.subarray(record.offset, record.offset + record.length)));
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
    const parents = new Set<string>();
    for (const [, at] of this.byIdMap) {
      const parentId = this.records[at].parentId;
      if (parentId !== null) parents.add(parentId);
    }
    const leaves: string[] = [];
    for (const [id] of this.byIdMap) if (!parents.has(id)) leaves.push(id);
    return leaves;
  }
}

function isBlank(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0b && c !== 0x0c) return false;
  }
  return true;
}

/**
 * Indexes a session file's bytes. Never throws on content: what is wrong is in `problems`.
 *
 * @example
 * const index = indexSession(bytes);
 * index.defaultLeafId; // the entry pi continues from
 */
export function indexSession(bytes: Uint8Array): SessionIndex {
  return new SessionIndex(bytes);
}
