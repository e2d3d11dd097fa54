/**
 * Reading one line of a session file, as pi does (skip lines that trim to nothing and lines
 * `JSON.parse` refuses), and reducing an entry to the small record the tree index keeps.
 * Shared by the whole-file reader and by the service, which indexes each appended batch.
 */
import { decodeUtf8, type LineSpan } from "./jsonl.js";
import type { Problem } from "./problems.js";
import type { SessionHeader } from "./schema.js";

/** The small fields of an entry that the tree, labels, name, settings and context plan need. */
export interface EntryFacts {
  targetId?: unknown;
  label?: unknown;
  name?: unknown;
  thinkingLevel?: unknown;
  provider?: unknown;
  modelId?: unknown;
  /** Message entries: whether `message` is neither missing nor null, and its provider/model. */
  hasMessage?: boolean;
  messageProvider?: unknown;
  messageModel?: unknown;
  /** Compaction entries. */
  firstKeptEntryId?: unknown;
  firstKeptEntryIndex?: unknown;
  hasRetainedTail?: boolean;
}

/** What the tree index keeps of one line: plain data, storable as JSON. */
export interface LineRecord {
  /** 1-based line number in the file. */
  line: number;
  /** Byte offset and length of the line (without its `\n`). */
  offset: number;
  length: number;
  /** pi's position of this value among the file's parsed values, the header being 0 (v1 migration counts these). */
  value: number;
  /** Whether the value is a JSON object; anything else is junk that pi still keeps (and may take as the leaf). */
  isObject: boolean;
  type?: string;
  id?: string;
  /** The parent id; `null` for a root. */
  parentId: string | null;
  timestamp?: string;
  /** `message.role` as written (before the v2 → v3 rename). */
  role?: string;
  facts?: EntryFacts;
}

export type Json = Record<string, unknown>;

/** One line, read. */
export type LineRead = { kind: "blank" } | { kind: "invalid"; torn: boolean } | { kind: "value"; value: unknown };

/** A UTF-8 byte order mark at `at` is 3 bytes long; pi trims one at the start of a file. */
function bomLength(bytes: Uint8Array, at: number): number {
  return bytes[at] === 0xef && bytes[at + 1] === 0xbb && bytes[at + 2] === 0xbf ? 3 : 0;
}

/**
 * A line's text as pi parses it: a byte order mark is trimmed at the very start of the file
 * (pi's `String.prototype.trim` of the whole file) and nowhere else, where it makes the line
 * invalid JSON.
 *
 * @example trimFileStartBom("\uFEFF{}", true) // "{}"
 */
export function trimFileStartBom(text: string, atFileStart: boolean): string {
  return atFileStart && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** What {@link readValueAt} answers for a line that trims to nothing, and for one JSON.parse refuses. */
export const BLANK_LINE: unique symbol = Symbol("blank line");
export const INVALID_LINE: unique symbol = Symbol("invalid line");

/**
 * Reads the line at bytes [offset, offset + length): its JSON value, or BLANK_LINE (pi skips it
 * silently), or INVALID_LINE (pi skips it). No result object around the value: the whole-file
 * reader may call it for every line.
 */
export function readValueAt(
  bytes: Uint8Array,
  offset: number,
  length: number,
  atFileStart: boolean,
): unknown | typeof BLANK_LINE | typeof INVALID_LINE {
  // A UTF-8 byte order mark at the very start of the file is trimmed by pi (String.prototype.trim).
  const bom = atFileStart ? bomLength(bytes, offset) : 0;
  const text = decodeUtf8(bytes.subarray(offset + bom, offset + length));
  try {
    return JSON.parse(text);
  } catch {
    return text.trim() === "" ? BLANK_LINE : INVALID_LINE;
  }
}

/** Whether an invalid line looks like a torn write: the start of an entry glued mid-line. */
export function looksTorn(bytes: Uint8Array, offset: number, length: number): boolean {
  return decodeUtf8(bytes.subarray(offset, offset + length)).indexOf('{"type":"', 1) > 0;
}

/**
 * Reads a line: blank (pi skips it silently), invalid JSON (pi skips it), or a JSON value.
 * `atFileStart`: whether the span starts the file (`bytes` may hold just part of a file).
 */
export function readLine(bytes: Uint8Array, span: LineSpan, atFileStart = span.offset === 0): LineRead {
  const value = readValueAt(bytes, span.offset, span.length, atFileStart);
  if (value === BLANK_LINE) return { kind: "blank" };
  if (value === INVALID_LINE) return { kind: "invalid", torn: looksTorn(bytes, span.offset, span.length) };
  return { kind: "value", value };
}

/**
 * Parses a record's entry from bytes holding its line at `record.offset - base` (the whole file:
 * base 0; a slice of it: the slice's file offset).
 */
export function parseRecordLine(bytes: Uint8Array, record: Pick<LineRecord, "offset" | "length">, base = 0): unknown {
  const at = record.offset - base;
  const bom = record.offset === 0 ? bomLength(bytes, at) : 0;
  return JSON.parse(decodeUtf8(bytes.subarray(at + bom, at + record.length)));
}

export function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function isHeader(value: unknown): value is SessionHeader {
  return isObject(value) && value.type === "session" && typeof value.id === "string";
}

function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

// Every member read here and in recordOf must be kept by the WebAssembly skeleton
// (wasm/skeleton.c: ENTRY_FIELDS, MESSAGE_FIELDS); skeleton.test.ts checks that they match.

/** The facts of entry types that have none: one shared object (records are made by the thousand). */
const NO_FACTS: EntryFacts = Object.freeze({});

function factsOf(entry: Json): EntryFacts {
  switch (entry.type) {
    case "message": {
      const message = entry.message as Json | null | undefined;
      if (message === undefined || message === null) return { hasMessage: false };
      return { hasMessage: true, messageProvider: message.provider, messageModel: message.model };
    }
    case "label":
      return { targetId: entry.targetId, label: entry.label };
    case "context_edit":
      return { targetId: entry.targetId };
    case "session_info":
      return { name: entry.name };
    case "title_change":
      // oh-my-pi's rename: its title is the session's name from here on.
      return { name: entry.title };
    case "thinking_level_change":
      return { thinkingLevel: entry.thinkingLevel };
    case "model_change":
      return { provider: entry.provider, modelId: entry.modelId };
    case "compaction":
      return {
        firstKeptEntryId: entry.firstKeptEntryId,
        firstKeptEntryIndex: entry.firstKeptEntryIndex,
        hasRetainedTail: Array.isArray(entry.retainedTail),
      };
    default:
      return NO_FACTS;
  }
}

/** The record of a parsed value (`null` and extra headers are the caller's to refuse first). */
export function recordOf(span: LineSpan, value: unknown, valueIndex: number): LineRecord {
  // Every field is always set, in one order: records stay one object shape (fast to build and
  // read by the thousand); JSON.stringify drops the undefined ones when a record is stored.
  const entry = isObject(value) ? value : undefined;
  const message = entry?.type === "message" && isObject(entry.message) ? entry.message : undefined;
  return {
    line: span.line,
    offset: span.offset,
    length: span.length,
    value: valueIndex,
    isObject: entry !== undefined,
    type: asString(entry?.type),
    id: asString(entry?.id),
    parentId: asString(entry?.parentId) || null,
    timestamp: asString(entry?.timestamp),
    role: asString(message?.role),
    facts: entry ? factsOf(entry) : undefined,
  };
}

/** The problem reported for a line that is not kept as an entry, if any. */
export function lineProblem(span: LineSpan, read: LineRead, hasHeader: boolean): Problem | undefined {
  const where = { line: span.line, offset: span.offset, length: span.length };
  if (read.kind === "invalid") {
    return read.torn
      ? {
          kind: "torn-line",
          ...where,
          message: `line ${span.line} is a torn write with another entry glued onto it; skipped`,
        }
      : { kind: "invalid-json", ...where, message: `line ${span.line} is not valid JSON; skipped` };
  }
  if (read.kind !== "value") return undefined;
  if (read.value === null) return { kind: "not-an-entry", ...where, message: `line ${span.line} is null; skipped` };
  if (hasHeader && isObject(read.value) && read.value.type === "session") {
    return { kind: "extra-header", ...where, message: `line ${span.line} is a second session header; ignored` };
  }
  return undefined;
}

/** The problem for a kept value that is not a usable entry (no type, or no id after v1). */
export function recordProblem(record: LineRecord, version: number): Problem | undefined {
  if (record.type && (record.id !== undefined || version < 2)) return undefined;
  return {
    kind: "not-an-entry",
    line: record.line,
    offset: record.offset,
    length: record.length,
    message: `line ${record.line} is not an entry (no type or id)`,
  };
}
