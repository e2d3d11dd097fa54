/**
 * The tree index of a session file: one small record per line, built without parsing entry
 * content. Full entries are parsed on demand ({@link SessionIndex.entry}), so rebuilding a
 * context reads only the entries on its path.
 */
import { decodeUtf8, forEachLine, type LineSpan } from "./jsonl.js";
import { CURRENT_SESSION_VERSION, migrateEntry, migrateRole, type V1Links, v1EntryId } from "./migrate.js";
import type { Problem } from "./problems.js";
import type { SessionHeader } from "./schema.js";

/** The small fields of an entry that the tree, labels, name and settings need. */
export interface EntryFacts {
  targetId?: unknown;
  label?: unknown;
  name?: unknown;
  thinkingLevel?: unknown;
  provider?: unknown;
  modelId?: unknown;
  /** For message entries: whether `message` is neither missing nor null, and its role/provider/model. */
  hasMessage?: boolean;
  messageProvider?: unknown;
  messageModel?: unknown;
  firstKeptEntryIndex?: unknown;
}

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
  facts: EntryFacts | undefined;
  /** Set for v1 files: the links pi's migration gives this entry. */
  v1: V1Links | undefined;
  /** The parsed entry, kept when it is part of the default leaf's context (see the index's build). */
  cached: Record<string, unknown> | undefined;
}

type Json = Record<string, unknown>;

function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function isHeader(value: unknown): value is SessionHeader {
  return isObject(value) && value.type === "session" && typeof value.id === "string";
}

function factsOf(entry: Json): EntryFacts {
  switch (entry.type) {
    case "message": {
      const message = entry.message as Json | null | undefined;
      const hasMessage = message !== undefined && message !== null;
      return {
        hasMessage,
        messageProvider: hasMessage ? message.provider : undefined,
        messageModel: hasMessage ? message.model : undefined,
      };
    }
    case "label":
      return { targetId: entry.targetId, label: entry.label };
    case "session_info":
      return { name: entry.name };
    case "thinking_level_change":
      return { thinkingLevel: entry.thinkingLevel };
    case "model_change":
      return { provider: entry.provider, modelId: entry.modelId };
    case "compaction":
      return { firstKeptEntryIndex: entry.firstKeptEntryIndex };
    default:
      return {};
  }
}

/** Types whose full content goes into a context. */
const CONTENT_TYPES = new Set(["message", "custom_message", "branch_summary", "compaction"]);

/** What one line holds, once parsed. */
type Parsed = { ok: true; value: unknown; text: string } | { ok: false; text: string } | { blank: true };

/**
 * A session file, indexed. Immutable once built.
 *
 * Built in one pass over the lines, last to first, each parsed with `JSON.parse` (so a line is
 * accepted exactly when pi accepts it) and reduced to a small record. Walking backwards, the
 * entries the default leaf's context needs come first (pi's default leaf is the last line, and
 * parents precede their children): those are kept parsed, up to the last compaction's kept
 * range, and everything else is dropped. So reading a session costs one parse of each line, and
 * memory holds the bytes, the records and that one context.
 */
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

  private parseLine(span: LineSpan): Parsed {
    // A UTF-8 byte order mark at the very start is trimmed by pi (String.prototype.trim).
    const bom = span.offset === 0 && this.bytes[0] === 0xef && this.bytes[1] === 0xbb && this.bytes[2] === 0xbf ? 3 : 0;
    const text = decodeUtf8(this.bytes.subarray(span.offset + bom, span.offset + span.length));
    // pi skips a line that trims to nothing, and any line JSON.parse refuses.
    if (text.trim() === "") return { blank: true };
    try {
      return { ok: true, value: JSON.parse(text), text };
    } catch {
      return { ok: false, text };
    }
  }

  private build(): void {
    const spans: LineSpan[] = [];
    this.completeLength = forEachLine(this.bytes, (span) => spans.push(span));
    if (this.completeLength < this.bytes.length) {
      this.problems.push({
        kind: "unterminated-line",
        offset: this.completeLength,
        length: this.bytes.length - this.completeLength,
        message: "the last line has no newline yet; held back",
      });
    }
    const skip = this.findHeader(spans);
    const reversed: EntryRecord[] = [];
    // Which parsed values pi's v1 migration counts (it indexes them, the header being 0).
    const isValue = new Uint8Array(spans.length);
    const keeper = new ContextKeeper();
    for (let k = spans.length - 1; k >= 0; k--) {
      if (skip.has(k)) {
        isValue[k] = 1;
        continue;
      }
      const span = spans[k];
      const parsed = this.parseLine(span);
      if ("blank" in parsed) continue;
      const where = { line: span.line, offset: span.offset, length: span.length };
      if (!parsed.ok) {
        const torn = parsed.text.indexOf('{"type":"', 1) > 0;
        this.problems.push({
          kind: torn ? "torn-line" : "invalid-json",
          ...where,
          message: torn
            ? `line ${span.line} is a torn write with another entry glued onto it; skipped`
            : `line ${span.line} is not valid JSON; skipped`,
        });
        continue;
      }
      isValue[k] = 1;
      const value = parsed.value;
      if (value === null) {
        this.problems.push({ kind: "not-an-entry", ...where, message: `line ${span.line} is null; skipped` });
        continue;
      }
      if (this.header && isObject(value) && value.type === "session") {
        this.problems.push({
          kind: "extra-header",
          ...where,
          message: `line ${span.line} is a second session header; ignored`,
        });
        continue;
      }
      const entry = isObject(value) ? value : undefined;
      const record: EntryRecord = {
        index: -1,
        ...where,
        isObject: entry !== undefined,
        type: asString(entry?.type),
        id: asString(entry?.id),
        parentId: asString(entry?.parentId) || null,
        timestamp: asString(entry?.timestamp),
        role: entry && isObject(entry.message) ? asString(migrateRole(entry.message.role, this.version)) : undefined,
        facts: entry ? factsOf(entry) : undefined,
        v1: undefined,
        cached: undefined,
      };
      if (!record.type || (record.id === undefined && this.version >= 2)) {
        this.problems.push({
          kind: "not-an-entry",
          ...where,
          message: `line ${span.line} is not an entry (no type or id)`,
        });
      }
      if (reversed.length === 0) keeper.start(record);
      if (entry && keeper.offer(record, entry)) record.cached = migrateEntry(entry, this.version);
      reversed.push(record);
    }
    for (let i = reversed.length - 1; i >= 0; i--) {
      const record = reversed[i];
      record.index = this.records.length;
      this.records.push(record);
    }
    // Without a header, the entries say which version they are: ids mean v2 or later.
    if (!this.header && this.records.some((r) => r.id !== undefined)) this.version = CURRENT_SESSION_VERSION;
    if (this.version < 2) this.migrateV1(spans, isValue);
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

  /**
   * The header is the file's first JSON value (pi's rule). oh-my-pi writes a title slot line
   * before it, which oh-my-pi itself reads past: so do we. Returns the span indexes consumed.
   */
  private findHeader(spans: LineSpan[]): Set<number> {
    for (let k = 0; k < spans.length; k++) {
      const first = this.parseLine(spans[k]);
      if ("blank" in first || !first.ok) continue;
      if (isHeader(first.value)) {
        this.acceptHeader(spans[k].line, first.value);
        return new Set([k]);
      }
      const where = { line: spans[k].line, offset: spans[k].offset, length: spans[k].length };
      if (isObject(first.value) && first.value.type === "title") {
        for (let j = k + 1; j < spans.length; j++) {
          const next = this.parseLine(spans[j]);
          if ("blank" in next || !next.ok) continue;
          if (isHeader(next.value)) {
            this.problems.push({
              kind: "title-slot",
              ...where,
              message: "oh-my-pi title slot before the header; read past",
            });
            this.acceptHeader(spans[j].line, next.value);
            return new Set([k, j]);
          }
          break;
        }
      }
      this.problems.push({
        kind: "missing-header",
        ...where,
        message: "the file does not start with a session header",
      });
      return new Set();
    }
    return new Set();
  }

  private acceptHeader(line: number, header: SessionHeader): void {
    this.version = typeof header.version === "number" ? header.version : 1;
    this.header = { ...header, version: CURRENT_SESSION_VERSION };
    this.headerLine = line;
  }

  /** pi's v1 → v2 migration, on the records: ids by line, a linear parent chain. */
  private migrateV1(spans: LineSpan[], isValue: Uint8Array): void {
    const recordByValueIndex = new Map<number, number>();
    const recordByLine = new Map(this.records.map((r) => [r.line, r.index]));
    let valueIndex = 0;
    for (let k = 0; k < spans.length; k++) {
      if (!isValue[k]) continue;
      const at = recordByLine.get(spans[k].line);
      if (at !== undefined) recordByValueIndex.set(valueIndex, at);
      valueIndex++;
    }
    let previous: string | null = null;
    for (const record of this.records) {
      if (!record.isObject) continue;
      const id = v1EntryId(record.line);
      const links: V1Links = { id, parentId: previous };
      const target = record.facts?.firstKeptEntryIndex;
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
      record.cached = undefined;
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
    if (record.cached) return record.cached;
    const bom =
      record.offset === 0 && this.bytes[0] === 0xef && this.bytes[1] === 0xbb && this.bytes[2] === 0xbf ? 3 : 0;
    const value = JSON.parse(decodeUtf8(this.bytes.subarray(record.offset + bom, record.offset + record.length)));
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

/**
 * Decides, during the backward pass, which entries the default leaf's context will read: the
 * path from the last line up, as long as it is inside the last compaction's kept range.
 */
class ContextKeeper {
  private wanted: string | undefined;
  private state: "all" | "until" | "none" = "all";
  private keepUntil: unknown;

  start(last: EntryRecord): void {
    this.wanted = last.id;
  }

  /** Called for each record, last to first, with its entry; true when the entry should be kept. */
  offer(record: EntryRecord, entry: Json): boolean {
    if (record.id === undefined || record.id !== this.wanted) return false;
    this.wanted = record.parentId ?? undefined;
    const keep = this.state !== "none" && CONTENT_TYPES.has(record.type ?? "");
    if (this.state === "all" && record.type === "compaction") {
      // The last compaction on the path: its kept range is all that precedes it in the context.
      if (Array.isArray(entry.retainedTail)) this.state = "none";
      else {
        this.state = "until";
        this.keepUntil = entry.firstKeptEntryId;
      }
    } else if (this.state === "until" && record.id === this.keepUntil) this.state = "none";
    return keep;
  }
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
