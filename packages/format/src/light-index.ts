/**
 * The light index: what opening a session file and rebuilding its contexts needs, and nothing
 * more. The span scan (span-scan.ts) checks every line against JSON's grammar, says where each
 * read member's value is and hands over ids and parent ids, which link each entry to its
 * parent. Types and roles are kept as small codes; no entry becomes a JavaScript object until a
 * context reads it, and the bytes can stay on disk (see {@link ByteSource}), so a large file
 * is opened in about the time it takes to read it.
 *
 * It holds only files where that is exactly pi's reading: a v3 (or later) header on the first
 * line, then only entries JSON.parse accepts, each an object with a string `type` and `id`, ids
 * unique, every parent before its children, types and roles written plainly (no escapes or
 * non-ASCII bytes), parent ids strings or null, no escaped keys. For any other file it answers
 * undefined and the caller builds the full {@link SessionIndex}, which reads everything as pi
 * does and reports what is wrong.
 */
import type { PathReader } from "./context.js";
import { findHeader, headerVersion } from "./header.js";
import { decodeUtf8 } from "./jsonl.js";
import type { Json } from "./lines.js";
import type { Problem } from "./problems.js";
import type { SessionHeader } from "./schema.js";
import { MEMBER, type ReadAt, SPAN, SPAN_FLAG, SPAN_INTS, type SpanRun, spanScanner } from "./span-scan.js";

/** Where the light index reads a file's bytes after the scan: the file in memory, or on disk. */
export interface ByteSource {
  /** Bytes [offset, offset + length) of the file. */
  read(offset: number, length: number): Uint8Array;
  /** Reads these ranges ([offset, length], in file order) ahead of the reads that follow, in as few reads as it can. */
  prefetch?(ranges: [offset: number, length: number][]): void;
}

/** Entry types and message roles kept as codes (1 + their place here): reading one makes no string. */
const KNOWN_NAMES = [
  "message",
  "custom_message",
  "branch_summary",
  "compaction",
  "context_edit",
  "thinking_level_change",
  "model_change",
  "label",
  "session_info",
  "usage",
  "custom",
  "system",
  "user",
  "assistant",
  "toolResult",
];
const MESSAGE_TYPE = 1;
/** The code of a name not in {@link KNOWN_NAMES} (kept aside as a string). */
const OTHER = 255;
const QUOTE = 0x22;
const N = 0x6e; // the n of null

// Where each member read here starts in a span record (its end follows).
const TYPE = SPAN.member(MEMBER.type);
const MESSAGE = SPAN.member(MEMBER.message);
const ROLE = SPAN.member(MEMBER.role);

/** Known names by a key of their bytes: length, first and last byte. */
const namesByKey = new Map<number, string>();
for (const name of KNOWN_NAMES) {
  namesByKey.set(name.length | (name.charCodeAt(0) << 8) | (name.charCodeAt(name.length - 1) << 16), name);
}

/** Whether bytes [from, to) spell `text` (ASCII). */
function spells(bytes: Uint8Array, from: number, to: number, text: string): boolean {
  if (to - from !== text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[from + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** A session file read for its contexts: header, entries' spans, ids, parent links, types and roles. */
export class LightIndex {
  /** How many entries there are. */
  count = 0;
  /** Span records of the entries (the lines after the header), with offsets in the file. */
  private records = new Int32Array(0);
  /** Entry `k`'s parent entry, -1 for a root (or a parent not in the file). */
  private parents = new Int32Array(0);
  /** Entry `k`'s type and its message's role (0: none) as codes. */
  private types = new Uint8Array(0);
  private roles = new Uint8Array(0);
  /** Types and roles not in KNOWN_NAMES, by entry. */
  private readonly otherTypes = new Map<number, string>();
  private readonly otherRoles = new Map<number, string>();
  private readonly ids: string[] = [];
  private readonly byId = new Map<string, number>();
  /** Entries whose parent was not found when they were read (it may come later). */
  private readonly pending: number[] = [];
  /** Message entries without a message (missing or null). */
  private readonly withoutMessage: number[] = [];
  /** Where the entries start (past the header line), and the bytes covered by whole lines. */
  private entriesAt = 0;
  private complete = 0;

  private constructor(
    private readonly source: ByteSource,
    /** The file's size. */
    private readonly size: number,
    /** The header as written. */
    readonly header: SessionHeader,
    /** The header's format version (3 or later). */
    readonly version: number,
  ) {}

  /**
   * Indexes a whole session file in memory when the light index can read it as pi does;
   * undefined otherwise (the caller then builds the full index).
   */
  static of(bytes: Uint8Array): LightIndex | undefined {
    const end = bytes.lastIndexOf(0x0a) + 1;
    const index = LightIndex.start(bytes.subarray(0, end), bytes.length, {
      read: (offset, length) => bytes.subarray(offset, offset + length),
    });
    const scanner = index && spanScanner();
    if (!index || !scanner) return undefined;
    return scanner.scan(bytes, index.entriesAt, end, (run) => index.add(run)) && index.linked() ? index : undefined;
  }

  /**
   * Indexes a session file read through `read` (its first bytes already in `head`), a run at a
   * time; the bytes stay where they are and `source` reads the few a context needs later.
   */
  static ofFile(head: Uint8Array, size: number, read: ReadAt, source: ByteSource): LightIndex | undefined {
    const index = LightIndex.start(head, size, source);
    const scanner = index && spanScanner();
    if (!index || !scanner) return undefined;
    return scanner.scanFile(read, index.entriesAt, size, (run) => index.add(run)) && index.linked() ? index : undefined;
  }

  /** An empty index for a file that starts with `head`, when its header allows the light reading. */
  private static start(head: Uint8Array, size: number, source: ByteSource): LightIndex | undefined {
    // A byte order mark is pi's to trim: such a file takes the full reading.
    if (head[0] === 0xef) return undefined;
    const { header, headerLine, titleLine, end } = findHeader(head);
    if (!header || headerLine !== 1 || titleLine !== undefined || end === undefined) return undefined;
    const version = headerVersion(header);
    if (version < 3) return undefined;
    const index = new LightIndex(source, size, header, version);
    index.entriesAt = end;
    index.complete = end;
    return index;
  }

  /** Room for `count` entries. */
  private reserve(count: number): void {
    if (count <= this.parents.length) return;
    const capacity = Math.max(count, this.parents.length * 2, 1024);
    const grown = <T extends Int32Array | Uint8Array>(old: T, make: (n: number) => T, per = 1): T => {
      const next = make(capacity * per);
      next.set(old);
      return next;
    };
    this.records = grown(this.records, (n) => new Int32Array(n), SPAN_INTS);
    this.parents = grown(this.parents, (n) => new Int32Array(n));
    this.types = grown(this.types, (n) => new Uint8Array(n));
    this.roles = grown(this.roles, (n) => new Uint8Array(n));
  }

  /** Takes a run of the scan; false when the file needs the full reading. */
  private add(run: SpanRun): boolean {
    const { bytes, records, count, links } = run;
    // Every line accepted: then there are two links for each.
    if (links.length !== 2 * count) return false;
    // Room for the whole file at this run's lines per byte (and a quarter more), from the first run on.
    const expected = this.count ? 0 : Math.ceil(((this.size - this.entriesAt) / bytes.length) * count * 1.25);
    this.reserve(Math.max(this.count + count, expected));
    const { byId, ids, parents } = this;
    this.records.set(records, this.count * SPAN_INTS);
    for (let i = 0, at = 0; i < count; i++, at += SPAN_INTS) {
      const flags = records[at + SPAN.FLAGS];
      if (!records[at + SPAN.ACCEPTED] || !(flags & SPAN_FLAG.ENTRY) || flags & (SPAN_FLAG.WHOLE | SPAN_FLAG.ODD))
        return false;
      const k = this.count + i;
      const line = records[at + SPAN.OFFSET];
      const id = links[2 * i];
      const parent = links[2 * i + 1];
      const type = this.code(bytes, line, records[at + TYPE], records[at + TYPE + 1], k, this.otherTypes);
      // No type or id is no entry, a second header is pi's to skip: the full reading reports them.
      if (!type || typeof id !== "string" || this.otherTypes.get(k) === "session") return false;
      this.types[k] = type;
      const message = records[at + MESSAGE];
      const hasMessage = message !== 0 && bytes[line + message] !== N;
      if (hasMessage && flags & SPAN_FLAG.MESSAGE_OBJECT) {
        this.roles[k] = this.code(bytes, line, records[at + ROLE], records[at + ROLE + 1], k, this.otherRoles);
      } else if (!hasMessage && type === MESSAGE_TYPE) {
        this.withoutMessage.push(k);
      }
      if (parent === 0) parents[k] = k - 1;
      else if (typeof parent !== "string" || parent === "")
        parents[k] = -1; // null or "": a root, as pi's walk stops there
      else {
        const found = byId.get(parent);
        parents[k] = found ?? -1;
        if (found === undefined) this.pending.push(k);
      }
      const known = byId.size;
      byId.set(id, k);
      if (byId.size === known) return false; // a repeated id
      ids.push(id);
      this.records[k * SPAN_INTS + SPAN.OFFSET] += run.offset;
    }
    this.count += count;
    this.complete = run.offset + run.bytes.length;
    return true;
  }

  /** After the scan: false when a parent comes after its child (the full reading handles that). */
  private linked(): boolean {
    for (const k of this.pending) {
      const at = k * SPAN_INTS + SPAN.member(MEMBER.parentId);
      const start = this.records[k * SPAN_INTS + SPAN.OFFSET];
      const parentId = JSON.parse(
        decodeUtf8(this.source.read(start + this.records[at], this.records[at + 1] - this.records[at])),
      );
      if (this.byId.has(parentId)) return false;
    }
    return true;
  }

  /**
   * The code of a type or role written at bytes[line + start, line + end) (start 0: absent): 0
   * when absent or not a string; a name not in KNOWN_NAMES is kept in `others` for entry `k`.
   */
  private code(bytes: Uint8Array, line: number, start: number, end: number, k: number, others: Map<number, string>) {
    if (!start || bytes[line + start] !== QUOTE) return 0;
    const from = line + start + 1;
    const to = line + end - 1;
    const known = namesByKey.get((to - from) | (bytes[from] << 8) | (bytes[to - 1] << 16));
    if (known !== undefined && spells(bytes, from, to, known)) return KNOWN_NAMES.indexOf(known) + 1;
    others.set(k, decodeUtf8(bytes.subarray(from, to)));
    return OTHER;
  }

  /** Member `m` of entry `k` as JSON.parse reads it; undefined when absent. */
  private value(k: number, m: number): unknown {
    const at = k * SPAN_INTS;
    const start = this.records[at + SPAN.member(m)];
    if (!start) return undefined;
    const length = this.records[at + SPAN.member(m) + 1] - start;
    return JSON.parse(decodeUtf8(this.source.read(this.records[at + SPAN.OFFSET] + start, length)));
  }

  /** Entry `k`'s type. */
  type(k: number): string | undefined {
    const code = this.types[k];
    return code === OTHER ? this.otherTypes.get(k) : KNOWN_NAMES[code - 1];
  }

  /** The role of entry `k`'s message, when it has one (a message that is an object, with a string role). */
  role(k: number): string | undefined {
    const code = this.roles[k];
    return code === OTHER ? this.otherRoles.get(k) : code ? KNOWN_NAMES[code - 1] : undefined;
  }

  /** Entry `k`'s id. */
  id(k: number): string {
    return this.ids[k];
  }

  /** The entry whose id is `id`, or -1. */
  entryOf(id: string): number {
    return this.byId.get(id) ?? -1;
  }

  /** The path from a root down to entry `k` (parents come first, so it cannot loop). */
  pathTo(k: number): number[] {
    const reversed: number[] = [];
    for (let at = k; at >= 0; at = this.parents[at]) reversed.push(at);
    return reversed.reverse();
  }

  /** Entry `k`, parsed whole (v3 needs no migration). */
  entry(k: number): Json {
    const at = k * SPAN_INTS;
    return JSON.parse(
      decodeUtf8(this.source.read(this.records[at + SPAN.OFFSET], this.records[at + SPAN.LENGTH])),
    ) as Json;
  }

  /** The file's line number of entry `k` (the header is line 1, and the light index reads no blank line). */
  private lineNumber(k: number): number {
    return k + 2;
  }

  /**
   * What is wrong in the file, as the full reading reports it (`parseSession`'s `problems`): in
   * a file the light index reads, only parents not in the file, message entries without a
   * message, and an unfinished last line can be.
   */
  problems(): Problem[] {
    const problems: Problem[] = [];
    for (const k of this.pending) {
      const parentId = this.value(k, MEMBER.parentId) as string;
      const id = this.ids[k];
      problems.push({
        kind: "missing-parent",
        line: this.lineNumber(k),
        id,
        message: `the parent ${parentId} of ${id} is not in the file`,
      });
    }
    for (const k of this.withoutMessage) {
      const id = this.ids[k];
      problems.push({
        kind: "invalid-entry",
        line: this.lineNumber(k),
        id,
        message: `message entry ${id} has no message`,
      });
    }
    // In line order, a line's missing parent before its missing message, as the full reading lists them.
    problems.sort((a, b) => (a.line as number) - (b.line as number));
    if (this.complete < this.size) {
      problems.push({
        kind: "unterminated-line",
        offset: this.complete,
        length: this.size - this.complete,
        message: "the last line has no newline yet; held back",
      });
    }
    return problems;
  }

  /** Labels by target entry, as `labelsOf` reads them: the last label entry per target wins, an empty one clears it. */
  labels(): Map<string, string> {
    const labels = new Map<string, string>();
    const label = KNOWN_NAMES.indexOf("label") + 1;
    for (let k = 0; k < this.count; k++) {
      if (this.types[k] !== label) continue;
      const target = this.value(k, MEMBER.targetId) as string;
      const text = this.value(k, MEMBER.label);
      if (text) labels.set(target, text as string);
      else labels.delete(target);
    }
    for (const target of labels.keys()) if (!this.byId.has(target)) labels.delete(target);
    return labels;
  }

  /** The session name, as `nameOf` reads it: the last `session_info` entry's, trimmed; empty clears it. */
  name(): string | undefined {
    const info = KNOWN_NAMES.indexOf("session_info") + 1;
    for (let k = this.count - 1; k >= 0; k--) {
      if (this.types[k] !== info) continue;
      const name = this.value(k, MEMBER.name);
      return typeof name === "string" ? name.trim() || undefined : undefined;
    }
    return undefined;
  }

  /** The context rules' view of the entries (context.ts), read from their spans. */
  reader(): PathReader<number> {
    return {
      type: (k) => this.type(k),
      id: (k) => this.id(k),
      thinkingLevel: (k) => this.value(k, MEMBER.thinkingLevel),
      modelChange: (k) => ({
        provider: this.value(k, MEMBER.provider) as string,
        modelId: this.value(k, MEMBER.modelId) as string,
      }),
      assistantModel: (k) =>
        this.role(k) === "assistant"
          ? {
              provider: this.value(k, MEMBER.messageProvider) as string,
              modelId: this.value(k, MEMBER.messageModel) as string,
            }
          : undefined,
      role: (k) => this.role(k),
      entry: (k) => this.entry(k),
      prefetch: (ks) =>
        this.source.prefetch?.(
          [...ks]
            .sort((a, b) => a - b)
            .map((k) => [this.records[k * SPAN_INTS + SPAN.OFFSET], this.records[k * SPAN_INTS + SPAN.LENGTH]]),
        ),
    };
  }
}
