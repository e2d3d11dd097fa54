/**
 * Walking the tree: paths from a leaf to its root, guarded against parent cycles (pi follows
 * `parentId` without a guard and loops forever on a cycle).
 */
import type { EntryRecord, SessionIndex } from "./session-index.js";

/** A path from the root to a leaf, and whether the walk had to stop at a cycle. */
export interface TreePath {
  /** Root first, leaf last. */
  records: EntryRecord[];
  /** The id where the walk met an entry already on the path, if it did. */
  cycleAt?: string;
}

/** Paths walked lately, by the records of their index (shared by its views) and leaf. */
const walked = new WeakMap<readonly EntryRecord[], Map<EntryRecord, TreePath>>();
/** Paths kept per index: a page, its labels and its totals walk the same few branches. */
const WALKS_KEPT = 4;

/**
 * The path from the root down to `leaf`. A cycle ends the walk where it closes. An index is
 * immutable, so the last few walks of each are kept (a million-line path takes a while).
 */
export function pathTo(index: SessionIndex, leaf: EntryRecord): TreePath {
  // The default leaf's path was walked while the file was scanned.
  if (leaf === index.defaultLeaf && index.defaultPath) return { records: index.defaultPath.slice() };
  let kept = walked.get(index.records);
  if (!kept) {
    kept = new Map();
    walked.set(index.records, kept);
  }
  let path = kept.get(leaf);
  if (path)
    kept.delete(leaf); // kept again below, as the latest
  else path = walk(index, leaf);
  kept.set(leaf, path);
  if (kept.size > WALKS_KEPT) kept.delete(kept.keys().next().value as EntryRecord);
  // Callers own what they get: the kept path is copied.
  return path.cycleAt === undefined
    ? { records: path.records.slice() }
    : { records: path.records.slice(), cycleAt: path.cycleAt };
}

function walk(index: SessionIndex, leaf: EntryRecord): TreePath {
  const reversed: EntryRecord[] = [];
  const seen = new Uint8Array(index.records.length);
  let current: EntryRecord | undefined = leaf;
  let cycleAt: string | undefined;
  while (current) {
    if (seen[current.index]) {
      cycleAt = current.id;
      break;
    }
    seen[current.index] = 1;
    reversed.push(current);
    current = index.parentOf(current);
  }
  return cycleAt === undefined ? { records: reversed.reverse() } : { records: reversed.reverse(), cycleAt };
}

/** Ids of entries whose parent chain loops; each cycle is reported once, by its entries. */
export function findCycles(index: SessionIndex): string[][] {
  // Each step to a parent goes to an earlier line: no walk can come back.
  if (index.parentsFirst) return [];
  // 0 = unvisited, 1 = on the current walk, 2 = known to reach a root or a known cycle.
  const state = new Uint8Array(index.records.length);
  const cycles: string[][] = [];
  for (const start of index.records) {
    if (state[start.index] !== 0) continue;
    const walk: EntryRecord[] = [];
    let current: EntryRecord | undefined = start;
    while (current && state[current.index] === 0) {
      state[current.index] = 1;
      walk.push(current);
      current = index.parentOf(current);
    }
    if (current && state[current.index] === 1) {
      const from = walk.indexOf(current);
      cycles.push(walk.slice(from).map((r) => r.id ?? `line ${r.line}`));
    }
    for (const r of walk) state[r.index] = 2;
  }
  return cycles;
}
