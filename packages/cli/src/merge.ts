/**
 * Merging one session continued on two machines, by entry id (issue #27). Two copies that share
 * their header and a common part differ only by the lines each appended since: their union is a
 * valid pi session (entries form a tree by `id`/`parentId`, parents come first in each copy),
 * with both continuations as branches. This module decides such a merge from the new lines of
 * each side; `sync.ts` performs it with the offset-checked append.
 */

import { randomBytes } from "node:crypto";

const NEWLINE = 0x0a;
/** Ids named in reasons are cut to this length (they come from session files: hostile). */
const ID_SHOWN = 64;

/** The `customType` of the entry a merge writes so that pi resumes this machine's own branch. */
export const RESUME_MARKER = "pisync.resume";

/** One complete line: its exact bytes (with the `\n`), where it starts, its entry id and parent. */
export interface EntryLine {
  bytes: Uint8Array;
  /** Offset of the line in the bytes it was split from (-1: written by this merge). */
  at: number;
  id: string;
  /** The entry's `parentId` (null: a root, or none named); undefined: not a string or null (malformed). */
  parentId?: string | null;
  /** A resume marker (see `RESUME_MARKER`): not counted as an entry of the conversation. */
  marker?: boolean;
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
    const { id, type, parentId, customType } = entry as Record<string, unknown>;
    if (type === "session") return "another header";
    if (typeof id !== "string" || id.length === 0) return "not a pi session";
    lines.push({
      bytes: line,
      at: start,
      id,
      parentId:
        parentId === undefined || parentId === null ? null : typeof parentId === "string" ? parentId : undefined,
      ...(type === "custom" && customType === RESUME_MARKER ? { marker: true } : {}),
    });
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

/** `no parent for entry <id>`: a line whose `parentId` names no entry before it (or itself, or a later one: a cycle). */
export function orphanReason(id: string): string {
  const shown = id.length > ID_SHOWN ? `${id.slice(0, ID_SHOWN)}…` : id;
  return `no parent for entry ${JSON.stringify(shown)}`;
}

/** The entries of a file's common part (its header and the lines both copies hold): bytes by id, in order. */
function commonEntries(common: Uint8Array): EntryLine[] {
  const found: EntryLine[] = [];
  let start = 0;
  while (start < common.length) {
    const newline = common.indexOf(NEWLINE, start);
    const end = newline < 0 ? common.length : newline + 1;
    // The header and any line that is not an entry are skipped: they are the file's already.
    const one = entryLines(common.subarray(start, end));
    if (typeof one !== "string" && one.length === 1) found.push({ ...one[0], at: start });
    start = end;
  }
  return found;
}

/** What a merge needs besides the two sides' new lines. */
export interface MergeContext {
  /** The file's bytes before its new lines (header and common part): ids a cloud line may not reuse, parents it may name. */
  common?: Uint8Array;
  /** A fresh resume marker's line: `parentId` its parent, `taken` ids it must not reuse. */
  marker?: (parentId: string, taken: ReadonlySet<string>) => EntryLine;
}

/** A resume marker: a `custom` entry pi and omp keep in the tree and leave out of the model's context. */
export function resumeMarker(parentId: string, taken: ReadonlySet<string>, now = new Date()): EntryLine {
  let id: string;
  do id = randomBytes(4).toString("hex");
  while (taken.has(id));
  const entry = { type: "custom", customType: RESUME_MARKER, id, parentId, timestamp: now.toISOString() };
  return { bytes: Buffer.from(`${JSON.stringify(entry)}\n`), at: -1, id, parentId, marker: true };
}

/**
 * The merge of this machine's new lines (`local`: the file after the common part) with the
 * cloud's (`cloud`: the cloud copy after the common part). Both must be complete lines of
 * entries with string ids. A local line whose id is among the cloud's new lines with the same
 * bytes is already there; with other bytes it is a conflict. An id twice on one side is a
 * conflict too (pi never writes one twice). A cloud line is taken only when it is new and
 * well-formed: its id not in the file already with other bytes (the same bytes: already here),
 * its `parentId` null or an entry before it (the common part or an earlier cloud line: no cycle,
 * nothing dangling); else a generation, and why.
 *
 * pi resumes a file on its last line. So that each machine resumes its own branch, resume markers
 * (`resumeMarker`) keep each copy's last line on the branch it was on: one after the cloud's lines
 * in the file when they end on another branch, one after this machine's lines in the cloud when
 * they end off the cloud's. Markers are written only when entries other than markers cross,
 * so two machines never answer each other's markers. Pure but for the markers' ids and times.
 */
export function decideMerge(local: Uint8Array, cloud: Uint8Array, context: MergeContext = {}): MergeDecision {
  const ours = entryLines(local);
  if (typeof ours === "string") return { kind: "generation", reason: ours };
  const theirs = entryLines(cloud);
  if (typeof theirs === "string") return { kind: "generation", reason: theirs };
  const common = context.common ? commonEntries(context.common) : [];
  const commonById = new Map(common.map((line) => [line.id, line]));
  const cloudById = new Map<string, EntryLine>();
  const repeated = new Set<string>();
  for (const line of theirs) {
    const generation = (reason: string): MergeDecision => ({ kind: "generation", reason, cloudAt: line.at });
    if (cloudById.has(line.id)) return generation(conflictReason(line.id));
    const here = commonById.get(line.id);
    if (here && !sameBytes(here.bytes, line.bytes)) return generation(conflictReason(line.id));
    if (here) repeated.add(line.id);
    const parent = line.parentId;
    if (parent === undefined || (parent !== null && !commonById.has(parent) && !cloudById.has(parent))) {
      return generation(orphanReason(line.id));
    }
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
  const toLocal = theirs.filter((line) => !localIds.has(line.id) && !repeated.has(line.id));
  if (!context.marker) return { kind: "merge", toCloud, toLocal };
  const fileLeaf = (ours.at(-1) ?? common.at(-1))?.id;
  const cloudLeaf = theirs.at(-1)?.id;
  return withMarkers({ toCloud, toLocal }, [...common, ...ours, ...theirs], fileLeaf, cloudLeaf, context.marker);
}

/**
 * The merge with the resume markers it needs: the file's last line stays on `fileLeaf`'s branch
 * (pi's leaf before the merge), the cloud's on `cloudLeaf`'s (undefined: the cloud got no lines
 * since the common part; its last line is not known here, and the next machine to read it fixes
 * its own file).
 */
function withMarkers(
  merge: { toCloud: EntryLine[]; toLocal: EntryLine[] },
  all: EntryLine[],
  fileLeaf: string | undefined,
  cloudLeaf: string | undefined,
  make: NonNullable<MergeContext["marker"]>,
): MergeDecision {
  const { toCloud, toLocal } = merge;
  if (fileLeaf === undefined) return { kind: "merge", toCloud, toLocal };
  const parents = new Map(all.map((line) => [line.id, line.parentId ?? null]));
  // Whether `target` is `id` or one of its ancestors; bounded by the entries (a cycle ends the walk).
  const onBranch = (id: string | undefined, target: string) => {
    for (let at = id, steps = 0; at !== undefined && steps <= parents.size; steps++) {
      if (at === target) return true;
      at = parents.get(at) ?? undefined;
    }
    return false;
  };
  const taken = new Set(parents.keys());
  const mark = (parent: string) => {
    const line = make(parent, taken);
    taken.add(line.id);
    parents.set(line.id, parent);
    return line;
  };
  // Only entries other than markers crossing make markers: markers alone never answer markers.
  let fileMark =
    toLocal.some((line) => !line.marker) && !onBranch(toLocal.at(-1)?.id, fileLeaf) ? mark(fileLeaf) : undefined;
  const cloudEnd = fileMark ?? toCloud.at(-1);
  const cloudMark =
    cloudLeaf !== undefined && cloudEnd && !onBranch(cloudEnd.id, cloudLeaf) ? mark(cloudLeaf) : undefined;
  // The cloud's marker goes to the file too: after it, the file needs its own if it had none.
  if (cloudMark && !fileMark && !onBranch(cloudMark.id, fileLeaf)) fileMark = mark(fileLeaf);
  const fileMarks = [cloudMark, fileMark].filter((l) => l !== undefined);
  const cloudMarks = [fileMark, cloudMark].filter((l) => l !== undefined);
  return { kind: "merge", toCloud: [...toCloud, ...cloudMarks], toLocal: [...toLocal, ...fileMarks] };
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
