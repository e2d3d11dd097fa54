/**
 * The light index: what opening a session file and rebuilding its contexts needs, and nothing
 * more. The span scan (span-scan.ts) checks every line against JSON's grammar, says where each
 * read member's value is, codes types and roles, and links each entry to its parent by the
 * hash of its id. No entry becomes a JavaScript object, and no id a string, until a context
 * reads it; the bytes can stay on disk (see {@link ByteSource}). A large file is opened in about
 * the time it takes to read it.
 *
 * It holds only files where that is exactly pi's reading: a v3 (or later) header on the first
 * line, then only entries JSON.parse accepts, each an object with a `type` and an `id` that are
 * plain strings (ASCII, no escapes: their bytes are their text), parent ids null or plain
 * strings, ids unique, every parent before its children, no escaped keys. Links found by hash
 * are checked against the ids' text. For any other file it answers undefined, and the caller
 * builds the full {@link SessionIndex}, which reads everything as pi does and reports what is
 * wrong.
 */

import { findHeader, headerVersion } from "./header.js";
import { decodeUtf8 } from "./jsonl.js";
import type { Json } from "./lines.js";
import type { PathReader } from "./path-reader.js";
import type { Problem } from "./problems.js";
import type { SessionHeader } from "./schema.js";
import {
  type LinkTable,
  MEMBER,
  type ReadAt,
  SPAN,
  SPAN_FLAG,
  SPAN_INTS,
  type SpanRun,
  type SpanScanner,
  spanScanner,
  textHash,
} from "./span-scan.js";

/** Where the light index reads a file's bytes after the scan: the file in memory, or on disk. */
export interface ByteSource {
  /** Bytes [offset, offset + length) of the file. */
  read(offset: number, length: number): Uint8Array;
  /** Reads these ranges ([offset, length], in file order) ahead of the reads that follow, in as few reads as it can. */
  prefetch?(ranges: [offset: number, length: number][]): void;
  /** Runs `use`, whose reads are many and small, with the bytes at hand (a file kept open meanwhile). */
  batch?<T>(use: () => T): T;
}

/** Entry types and message roles the scan codes (1 + their place here, as NAMES in wasm/skeleton.c). */
export const KNOWN_NAMES = [
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
  "session",
];
/** The code of another string (read from the bytes when asked). */
const OTHER = 255;
const MESSAGE = 1;
const LABEL = KNOWN_NAMES.indexOf("label") + 1;
const SESSION_INFO = KNOWN_NAMES.indexOf("session_info") + 1;
/** The most the span records grow at once, as a multiple of the lines read. */
const GROWTH = 8;
/** A session file read for its contexts: header, entries' spans, codes and parent links. */
export class LightIndex {
  /** How many entries there are. */
  count = 0;
  /** Span records of the entries (the lines after the header); offsets are in their run. */
  private records = new Int32Array(0);
  /** The first entry of each run, and where the run starts in the file. */
  private readonly runFirst: number[] = [];
  private readonly runOffset: number[] = [];
  /** Entry `k`'s parent entry, -1 for a root (or a parent not in the file). */
  private parents: Int32Array = new Int32Array(0);
  /** Entries whose parent is not in the file, with the parent id they name. */
  private readonly missing: [entry: number, parentId: string][] = [];
  /** Entries whose parent was not linked when they were read (it may come later), with its id. */
  private readonly pending: [entry: number, parentId: string][] = [];
  private readonly names = new Map<number, string>();
  /** The entries' links by id hash, once the scan is done. */
  private links: LinkTable | undefined;
  /** Where the entries start (past the header line), and the bytes covered by whole lines. */
  private entriesAt = 0;
  private complete = 0;

  private constructor(
    private readonly source: ByteSource,
    /** The scan's scanner, until the scan is done (then dropped, with its memory). */
    private scanner: SpanScanner | undefined,
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
    const source = { read: (offset: number, length: number) => bytes.subarray(offset, offset + length) };
    const index = LightIndex.start(bytes.subarray(0, end), bytes.length, source);
    if (!index) return undefined;
    return index.scanning().scan(bytes, index.entriesAt, end, (run) => index.add(run)) && index.settle()
      ? index
      : undefined;
  }

  /**
   * Indexes a session file read through `read` (its first bytes already in `head`), a run at a
   * time; the bytes stay where they are and `source` reads the few a context needs later.
   */
  static ofFile(head: Uint8Array, size: number, read: ReadAt, source: ByteSource): LightIndex | undefined {
    const index = LightIndex.start(head, size, source);
    if (!index) return undefined;
    return index.scanning().scanFile(read, index.entriesAt, size, (run) => index.add(run)) && index.settle()
      ? index
      : undefined;
  }

  /** An empty index for a file that starts with `head`, when its header allows the light reading. */
  private static start(head: Uint8Array, size: number, source: ByteSource): LightIndex | undefined {
    // A byte order mark is pi's to trim: such a file takes the full reading.
    if (head[0] === 0xef) return undefined;
    const { header, headerLine, titleLine, end } = findHeader(head);
    if (!header || headerLine !== 1 || titleLine !== undefined || end === undefined) return undefined;
    const version = headerVersion(header);
    const scanner = version >= 3 ? spanScanner() : undefined;
    if (!scanner) return undefined;
    const index = new LightIndex(source, scanner, size, header, version);
    index.entriesAt = end;
    index.complete = end;
    return index;
  }

  /** The scanner, while the scan is going on. */
  private scanning(): SpanScanner {
    if (!this.scanner) throw new Error("the light index's scan is done");
    return this.scanner;
  }

  /** Takes a run of the scan; false when the file needs the full reading. */
  private add(run: SpanRun): boolean {
    const { records, count } = run;
    const first = this.count;
    if ((first + count) * SPAN_INTS > this.records.length) {
      // Room for the whole file at this run's lines per byte (and a quarter more), then doubling;
      // at most GROWTH times the lines read so far (a run of short lines before long ones would
      // otherwise reserve many times the file's size).
      const estimate = Math.ceil(((this.size - this.entriesAt) / run.bytes.length) * count * 1.25);
      const expected = Math.min(estimate, GROWTH * (first + count));
      const grown = new Int32Array(Math.max(first + count, expected, 2 * this.count) * SPAN_INTS);
      grown.set(this.records.subarray(0, first * SPAN_INTS));
      this.records = grown;
    }
    this.records.set(records, first * SPAN_INTS);
    this.runFirst.push(first);
    this.runOffset.push(run.offset);
    const looked = this.scanning().link();
    if (!looked) return false;
    this.count += count;
    this.complete = run.offset + run.bytes.length;
    // Links by hash: a found parent must have the id the entry names (else it is not in the file).
    const parents = this.scanning().parents(this.count);
    for (const k of looked) {
      const parentId = this.text(k, MEMBER.parentId, run);
      const parent = parents[k];
      if (parent === -2) this.pending.push([k, parentId]);
      else if (this.text(parent, MEMBER.id, run) !== parentId) {
        parents[k] = -1;
        this.missing.push([k, parentId]);
      }
    }
    return true;
  }

  /** After the scan: false when a parent comes after its child (the full reading handles that). */
  private settle(): boolean {
    this.links = this.scanning().links(this.count);
    this.scanner = undefined;
    for (const [k, parentId] of this.pending) {
      if (this.entryOf(parentId) >= 0) return false;
      this.missing.push([k, parentId]);
    }
    this.parents = this.links.parents;
    for (const [k] of this.missing) this.parents[k] = -1;
    this.missing.sort((a, b) => a[0] - b[0]);
    return true;
  }

  /** Runs `use`, which reads many entries' members, in one batch of the source's reads (a file opened once). */
  batch<T>(use: () => T): T {
    return this.source.batch ? this.source.batch(use) : use();
  }

  /** Where entry `k`'s line starts in the file. */
  private offsetOf(k: number): number {
    let low = 0;
    let high = this.runFirst.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.runFirst[middle] <= k) low = middle;
      else high = middle - 1;
    }
    return this.runOffset[low] + this.records[k * SPAN_INTS + SPAN.OFFSET];
  }

  /** The bytes of member `m` of entry `k` ([start, end) from its line's start; undefined when absent), read from `run` when it holds them. */
  private bytesOf(k: number, m: number, run?: SpanRun): Uint8Array | undefined {
    const at = k * SPAN_INTS + SPAN.member(m);
    const start = this.records[at];
    if (!start) return undefined;
    const length = this.records[at + 1] - start;
    const line = this.offsetOf(k);
    if (run && line >= run.offset && line < run.offset + run.bytes.length) {
      return run.bytes.subarray(line - run.offset + start, line - run.offset + start + length);
    }
    return this.source.read(line + start, length);
  }

  /** The text of a plain string member of entry `k` (id, parent id: no escapes), without its quotes. */
  private text(k: number, m: number, run?: SpanRun): string {
    const bytes = this.bytesOf(k, m, run) as Uint8Array;
    return decodeUtf8(bytes.subarray(1, bytes.length - 1));
  }

  /** Member `m` of entry `k` as JSON.parse reads it; undefined when absent. */
  private value(k: number, m: number): unknown {
    const bytes = this.bytesOf(k, m);
    return bytes && JSON.parse(decodeUtf8(bytes));
  }

  private flags(k: number): number {
    return this.records[k * SPAN_INTS + SPAN.FLAGS];
  }

  /** A coded name (0: none), read from member `m` when it is not a known one. */
  private coded(k: number, code: number, m: number): string | undefined {
    if (code !== OTHER) return code ? KNOWN_NAMES[code - 1] : undefined;
    const key = k * 2 + (m === MEMBER.type ? 0 : 1);
    let name = this.names.get(key);
    if (name === undefined) {
      name = this.text(k, m);
      this.names.set(key, name);
    }
    return name;
  }

  /** Entry `k`'s type. */
  type(k: number): string | undefined {
    return this.coded(k, this.records[k * SPAN_INTS + SPAN.CODES] & 255, MEMBER.type);
  }

  /** The role of entry `k`'s message, when it has one (a message that is an object, with a string role). */
  role(k: number): string | undefined {
    return this.coded(k, (this.records[k * SPAN_INTS + SPAN.CODES] >> 8) & 255, MEMBER.role);
  }

  /** Entry `k`'s id. */
  id(k: number): string {
    return this.text(k, MEMBER.id);
  }

  /** The entry whose id is `id`, or -1. */
  entryOf(id: string): number {
    const k = this.links ? this.links.find(...textHash(id)) : -1;
    return k >= 0 && this.id(k) === id ? k : -1;
  }

  /** The path from a root down to entry `k` (parents come first, so it cannot loop). */
  pathTo(k: number): number[] {
    const reversed: number[] = [];
    for (let at = k; at >= 0; at = this.parents[at]) reversed.push(at);
    return reversed.reverse();
  }

  /** Entry `k`, parsed whole (v3 needs no migration). */
  entry(k: number): Json {
    const length = this.records[k * SPAN_INTS + SPAN.LENGTH];
    return JSON.parse(decodeUtf8(this.source.read(this.offsetOf(k), length))) as Json;
  }

  /** The file's line number of entry `k` (the header is line 1, and the light index reads no blank line). */
  private lineNumber(k: number): number {
    return k + 2;
  }

  /**
   * What is wrong in the file, as the full reading reports it (`parseSession`'s `problems`): in
   * a file the light index reads, only entries whose type is "" (no type, to the full reading),
   * parents not in the file, message entries without a message, and an unfinished last line can be.
   */
  problems(): Problem[] {
    return this.batch(() => this.findProblems());
  }

  private findProblems(): Problem[] {
    const problems: Problem[] = [];
    const typeAt = SPAN.member(MEMBER.type);
    for (let k = 0; k < this.count; k++) {
      // A type written "" (two bytes: its quotes).
      if (this.records[k * SPAN_INTS + typeAt + 1] - this.records[k * SPAN_INTS + typeAt] !== 2) continue;
      const line = this.lineNumber(k);
      problems.push({
        kind: "not-an-entry",
        line,
        offset: this.offsetOf(k),
        length: this.records[k * SPAN_INTS + SPAN.LENGTH],
        message: `line ${line} is not an entry (no type or id)`,
      });
    }
    for (const [k, parentId] of this.missing) {
      problems.push({
        kind: "missing-parent",
        line: this.lineNumber(k),
        id: this.id(k),
        message: `the parent ${parentId} of ${this.id(k)} is not in the file`,
      });
    }
    for (let k = 0; k < this.count; k++) {
      if ((this.records[k * SPAN_INTS + SPAN.CODES] & 255) !== MESSAGE || this.flags(k) & SPAN_FLAG.HAS_MESSAGE)
        continue;
      const id = this.id(k);
      problems.push({
        kind: "invalid-entry",
        line: this.lineNumber(k),
        id,
        message: `message entry ${id} has no message`,
      });
    }
    // In line order, a line's missing type, then its missing parent, then its missing message, as the full reading lists them.
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
    return this.batch(() => this.readLabels());
  }

  private readLabels(): Map<string, string> {
    const labels = new Map<string, string>();
    for (let k = 0; k < this.count; k++) {
      if ((this.records[k * SPAN_INTS + SPAN.CODES] & 255) !== LABEL) continue;
      const target = this.value(k, MEMBER.targetId) as string;
      const text = this.value(k, MEMBER.label);
      if (text) labels.set(target, text as string);
      else labels.delete(target);
    }
    for (const target of labels.keys())
      if (typeof target !== "string" || this.entryOf(target) < 0) labels.delete(target);
    return labels;
  }

  /** The session name, as `nameOf` reads it: the last `session_info` entry's, trimmed; empty clears it. */
  name(): string | undefined {
    for (let k = this.count - 1; k >= 0; k--) {
      if ((this.records[k * SPAN_INTS + SPAN.CODES] & 255) !== SESSION_INFO) continue;
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
      withId: (id) => {
        const k = typeof id === "string" ? this.entryOf(id) : -1;
        return k >= 0 ? k : undefined;
      },
      prefetch: (ks) =>
        this.source.prefetch?.(
          [...ks].sort((a, b) => a - b).map((k) => [this.offsetOf(k), this.records[k * SPAN_INTS + SPAN.LENGTH]]),
        ),
    };
  }
}
