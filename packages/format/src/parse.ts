/**
 * `parseSession`: a whole session file read into memory, as pi reads it on open (v1 and v2
 * migrated in memory, broken lines skipped), with what was wrong reported instead of thrown.
 */

import { indexSession } from "./index-scan.js";
import { encodeUtf8 } from "./jsonl.js";
import { LightIndex } from "./light-index.js";
import { CURRENT_SESSION_VERSION } from "./migrate.js";
import type { Problem } from "./problems.js";
import type { SessionEntry, SessionHeader } from "./schema.js";
import type { SessionIndex } from "./session-index.js";
import { findCycles } from "./tree.js";

/** A session file, read. */
export interface ParsedSession {
  /** The header (with `version` set to the current version, as pi reports it after migrating). */
  header: SessionHeader | undefined;
  /** The version the file was written in (1 when the header has none). */
  version: number;
  /** Every entry in file order, migrated to the current version (parsed on first access). */
  readonly entries: SessionEntry[];
  /** The leaf pi continues from on open; `null` when there is none. */
  leafId: string | null;
  /** Labels by target id (see {@link labelsOf}). */
  labels: Map<string, string>;
  /** The name set by the last `session_info` entry in file order, trimmed. */
  name: string | undefined;
  /** Everything found wrong, in file order: never thrown. */
  problems: Problem[];
  /** The tree index the entries came from (built on first read when the light index read the file). */
  index: SessionIndex;
  /** The light index, when it could read the file: contexts are rebuilt from it. */
  light?: LightIndex;
}

/** Labels by target entry: the last label entry per target wins; an empty one clears it. Labels on ids not in the file are left out. */
export function labelsOf(index: SessionIndex): Map<string, string> {
  const labels = new Map<string, string>();
  for (const record of index.records) {
    if (record.type !== "label" || !record.facts) continue;
    const target = record.facts.targetId as string;
    const label = record.facts.label;
    if (label) labels.set(target, label as string);
    else labels.delete(target);
  }
  for (const target of labels.keys()) if (!index.byId(target)) labels.delete(target);
  return labels;
}

/** The session name: the last `session_info` in file order, trimmed; empty clears it. */
export function nameOf(index: SessionIndex): string | undefined {
  for (let i = index.records.length - 1; i >= 0; i--) {
    const record = index.records[i];
    if (record.type !== "session_info") continue;
    const name = record.facts?.name;
    return typeof name === "string" ? name.trim() || undefined : undefined;
  }
  return undefined;
}

/** Tree-level problems (cycles) on top of the index's line-level ones. */
export function treeProblems(index: SessionIndex): Problem[] {
  return findCycles(index).map((ids) => ({
    kind: "parent-cycle" as const,
    id: ids[0],
    message: `parentId cycle through ${ids.join(" → ")}`,
  }));
}

/** Entries that cannot take part in a context: a `message` entry without a message (pi throws on it). */
export function entryProblems(index: SessionIndex): Problem[] {
  const problems: Problem[] = [];
  for (const record of index.records) {
    if (record.type === "message" && record.facts && !record.facts.hasMessage) {
      problems.push({
        kind: "invalid-entry",
        line: record.line,
        id: record.id,
        message: `message entry ${record.id} has no message`,
      });
    }
  }
  return problems;
}

/** Whether the session has an entry with this id (without building the full index when the light index read it). */
export function hasEntry(session: ParsedSession, id: string): boolean {
  return session.light ? session.light.entryOf(id) >= 0 : session.index.byId(id) !== undefined;
}

/**
 * Reads a whole session file. Accepts the file's bytes (preferred: offsets are bytes) or its
 * text. Never throws on content. Cheap: `entries` are parsed in full only when first read;
 * {@link buildSessionContext} parses just the entries on its path.
 *
 * @example
 * const { header, entries, leafId, problems } = parseSession(readFileSync(path));
 */
export function parseSession(input: Uint8Array | string): ParsedSession {
  const bytes = typeof input === "string" ? encodeUtf8(input) : input;
  const light = LightIndex.of(bytes);
  return light ? lightSession(light, () => bytes) : fullSession(bytes);
}

/**
 * A session the light index read: its header and leaf at once, its labels, name and problems
 * from the light index when first read; what needs every entry (`entries`, `index`) from the
 * full reading, on first access.
 */
export function lightSession(light: LightIndex, bytes: () => Uint8Array): ParsedSession {
  let full: ParsedSession | undefined;
  let labels: Map<string, string> | undefined;
  let name: { value: string | undefined } | undefined;
  let problems: Problem[] | undefined;
  const whole = () => {
    full ??= fullSession(bytes());
    return full;
  };
  return {
    header: { ...light.header, version: CURRENT_SESSION_VERSION },
    version: light.version,
    leafId: light.count ? light.id(light.count - 1) : null,
    light,
    get entries() {
      return whole().entries;
    },
    get labels() {
      labels ??= light.labels();
      return labels;
    },
    get name() {
      name ??= { value: light.name() };
      return name.value;
    },
    get problems() {
      problems ??= light.problems();
      return problems;
    },
    get index() {
      return whole().index;
    },
  };
}

/** A session read through the full tree index. */
export function fullSession(bytes: Uint8Array): ParsedSession {
  const index = indexSession(bytes);
  const problems = [...index.problems, ...treeProblems(index), ...entryProblems(index)];
  problems.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
  let entries: SessionEntry[] | undefined;
  return {
    header: index.header,
    version: index.version,
    get entries() {
      entries ??= index.records.filter((r) => r.isObject).map((r) => index.entry(r) as SessionEntry);
      return entries;
    },
    leafId: index.defaultLeafId,
    labels: labelsOf(index),
    name: nameOf(index),
    problems,
    index,
  };
}
