/**
 * Merging one session continued on two machines, by entry id (issue #27). Two copies that share
 * their header and a common part differ only by the lines each appended since: their union is a
 * valid pi session (entries form a tree by `id`/`parentId`, parents come first in each copy),
 * with both continuations as branches. This module decides such a merge from the new lines of
 * each side; `sync.ts` performs it with the offset-checked append.
 */

const NEWLINE = 0x0a;
/** Ids named in reasons are cut to this length (they come from session files: hostile). */
const ID_SHOWN = 64;

/** One complete line: its exact bytes (with the `\n`), where it starts, and its entry id. */
export interface EntryLine {
  bytes: Uint8Array;
  /** Offset of the line in the bytes it was split from. */
  at: number;
  id: string;
}

/**
 * A merge: `toCloud` (this machine's new lines the cloud lacks, in file order) goes to the cloud
 * in one append; `toLocal` (the cloud's new lines the file lacks, in cloud order) is appended to
 * the file. Or not a merge: a new generation, and why.
 */
export type MergeDecision =
  | { kind: "merge"; toCloud: EntryLine[]; toLocal: EntryLine[] }
  | {
      kind: "generation";
      reason: string /** Offset (in the cloud's new lines) of the line at fault. */;
      cloudAt?: number;
    };

/** Whether bytes end with a newline (every line complete); empty bytes do. */
export function endsWithNewline(bytes: Uint8Array): boolean {
  return bytes.length === 0 || bytes[bytes.length - 1] === NEWLINE;
}

/**
 * Splits complete lines into entries; a line that is not a JSON object with a string `id`, or
 * is a session header, makes the whole answer a reason instead (not mergeable).
 */
export function entryLines(bytes: Uint8Array): EntryLine[] | string {
  if (!endsWithNewline(bytes)) return "not a pi session";
  const lines: EntryLine[] = [];
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(NEWLINE, start) + 1;
    const line = bytes.subarray(start, end);
    let entry: unknown;
    try {
      entry = JSON.parse(Buffer.from(line).toString("utf8"));
    } catch {
      return "not a pi session";
    }
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return "not a pi session";
    const { id, type } = entry as { id?: unknown; type?: unknown };
    if (type === "session") return "another header";
    if (typeof id !== "string" || id.length === 0) return "not a pi session";
    lines.push({ bytes: line, at: start, id });
    start = end;
  }
  return lines;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** `conflict on entry <id>`, the id shown inert and short. */
export function conflictReason(id: string): string {
  const shown = id.length > ID_SHOWN ? `${id.slice(0, ID_SHOWN)}…` : id;
  return `conflict on entry ${JSON.stringify(shown)}`;
}

/**
 * The merge of this machine's new lines (`local`: the file after the common part) with the
 * cloud's (`cloud`: the cloud copy after the common part). Both must be complete lines of
 * entries with string ids. A local line whose id is among the cloud's new lines with the same
 * bytes is already there; with other bytes it is a conflict. An id twice on one side is a
 * conflict too (pi never writes one twice). Pure: lines in, decision out.
 */
export function decideMerge(local: Uint8Array, cloud: Uint8Array): MergeDecision {
  const ours = entryLines(local);
  if (typeof ours === "string") return { kind: "generation", reason: ours };
  const theirs = entryLines(cloud);
  if (typeof theirs === "string") return { kind: "generation", reason: theirs };
  const cloudById = new Map<string, EntryLine>();
  for (const line of theirs) {
    if (cloudById.has(line.id)) return { kind: "generation", reason: conflictReason(line.id), cloudAt: line.at };
    cloudById.set(line.id, line);
  }
  const localIds = new Set<string>();
  const toCloud: EntryLine[] = [];
  for (const line of ours) {
    if (localIds.has(line.id)) return { kind: "generation", reason: conflictReason(line.id) };
    localIds.add(line.id);
    const there = cloudById.get(line.id);
    if (!there) toCloud.push(line);
    else if (!sameBytes(there.bytes, line.bytes)) {
      return { kind: "generation", reason: conflictReason(line.id), cloudAt: there.at };
    }
  }
  const toLocal = theirs.filter((line) => !localIds.has(line.id));
  return { kind: "merge", toCloud, toLocal };
}

/** The lines' bytes one after another. */
export function joinLines(lines: EntryLine[]): Uint8Array {
  return Buffer.concat(lines.map((l) => l.bytes));
}

/** A run of a session's bytes appended by one device, from `offset` to the next run's (the server's `writers`). */
export interface WriterRun {
  offset: number;
  device: string;
}

/** The devices that wrote the bytes at these offsets, each once, in order of first mention. */
export function devicesAt(writers: WriterRun[], offsets: number[]): string[] {
  const runs = [...writers].sort((a, b) => a.offset - b.offset);
  const found = new Set<string>();
  for (const offset of offsets) {
    let device: string | undefined;
    for (const run of runs) {
      if (run.offset > offset) break;
      device = run.device;
    }
    if (device) found.add(device);
  }
  return [...found];
}
