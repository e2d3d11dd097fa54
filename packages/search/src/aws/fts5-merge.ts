/**
 * Which leaves FTS5's incremental merge reads next, from its structure record (rowid 10 of a
 * table's `_data`): for a copy read lazily, whose change would otherwise miss them one at a
 * time (a rerun of the change per miss).
 *
 * FTS5 writes each transaction's terms as a new level-0 segment of `nLeaf` leaves, adds them to
 * the structure's write counter, and each time the counter passes a multiple of 64
 * (`FTS5_WORK_UNIT`) merges 64 × (levels) output leaves (`fts5IndexAutomerge`): at the first
 * level with a merge under way, its first `nMerge` segments; else all the segments of the level
 * that has the most, when it has at least `automerge` (4); work left once they are merged goes
 * on at the next level. An input is read from its first page on (a merge trims what it consumed).
 * Then a level of 16 segments (`crisismerge`) is merged whole. The record's layout is `fts5StructureDecode`'s.
 */

/** One segment: its id and its leaves (FTS5 page numbers, 1-based). */
export interface Fts5Segment {
  segid: number;
  first: number;
  last: number;
}

/** The parts of FTS5's structure record the merge reads. */
export interface Fts5Structure {
  writeCounter: number;
  levels: Array<{ merging: number; segments: Fts5Segment[] }>;
}

/** FTS5's unit of merge work, in leaves written (`FTS5_WORK_UNIT`). */
const WORK_UNIT = 64;
/** Segments a level needs before a merge of it starts (FTS5's default `automerge`). */
const AUTOMERGE = 4;
/** Segments at which a level is merged whole at once (FTS5's default `crisismerge`). */
const CRISIS_MERGE = 16;
/** The structure record of a table that keeps deletes apart (`contentless_delete`) starts with these 4 bytes after the cookie. */
const V2 = [0xff, 0x00, 0x00, 0x01];

/** Reads SQLite's varint (up to 9 bytes, big-endian 7-bit groups; the 9th byte whole). */
function varint(bytes: Uint8Array, at: { i: number }): number {
  let value = 0;
  for (let n = 0; n < 9; n++) {
    const byte = bytes[at.i++];
    if (byte === undefined) throw new Error("a structure record cut short");
    if (n === 8) return value * 256 + byte;
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) return value;
  }
  return value;
}

/** Decodes a structure record. @throws on a record this code cannot read */
export function decodeStructure(bytes: Uint8Array): Fts5Structure {
  const at = { i: 4 }; // the configuration cookie
  const v2 = V2.every((byte, k) => bytes[4 + k] === byte);
  if (v2) at.i += 4;
  const levelCount = varint(bytes, at);
  varint(bytes, at); // segments in all
  const writeCounter = varint(bytes, at);
  const levels: Fts5Structure["levels"] = [];
  for (let l = 0; l < levelCount; l++) {
    const merging = varint(bytes, at);
    const count = varint(bytes, at);
    const segments: Fts5Segment[] = [];
    for (let s = 0; s < count; s++) {
      const segment = { segid: varint(bytes, at), first: varint(bytes, at), last: varint(bytes, at) };
      if (v2) for (let k = 0; k < 5; k++) varint(bytes, at); // origins, tombstones, entries
      segments.push(segment);
    }
    levels.push({ merging, segments });
  }
  return { writeCounter, levels };
}

/**
 * The leaves (segment, page) the merge work of a transaction that writes `leaves` new leaves
 * reads, about: none unless the write counter passes a multiple of 64; else the first leaves of
 * each input, in proportion to what is left of it, twice over (a hint: what is read past them
 * is fetched as missed), `max` in all at most.
 */
export function mergeReads(
  structure: Fts5Structure,
  leaves: number,
  max: number,
): Array<{ segid: number; page: number }> {
  const reads = automergeReads(structure, leaves, max);
  // Then the crisis merge (`fts5IndexCrisismerge`): a level that reaches 16 segments (level 0 with
  // the change's own) is merged whole into the next, which may reach 16 in turn.
  for (let l = 0, count = (structure.levels[0]?.segments.length ?? 0) + 1; count >= CRISIS_MERGE; l++) {
    for (const segment of structure.levels[l]?.segments ?? []) {
      for (let page = segment.first; page <= segment.last; page++) {
        if (reads.length >= max) return reads;
        reads.push({ segid: segment.segid, page });
      }
    }
    count = (structure.levels[l + 1]?.segments.length ?? 0) + 1;
  }
  return reads;
}

/** The leaves the automerge work of a transaction of `leaves` new leaves reads first (see {@link mergeReads}). */
function automergeReads(structure: Fts5Structure, leaves: number, max: number): Array<{ segid: number; page: number }> {
  const { writeCounter, levels } = structure;
  const work = Math.floor((writeCounter + leaves) / WORK_UNIT) - Math.floor(writeCounter / WORK_UNIT);
  if (work <= 0 || levels.length === 0) return [];
  const output = WORK_UNIT * work * levels.length;
  // As `fts5IndexMerge` picks: the level with the most segments, unless a level before it has a
  // merge under way of more segments than that (its `nMerge` inputs are then taken).
  let inputs: Fts5Segment[] = [];
  let at = -1;
  let best = 0;
  for (const [l, level] of levels.entries()) {
    if (level.merging > 0) {
      if (level.merging > best) {
        inputs = level.segments.slice(0, level.merging);
        at = l;
        best = AUTOMERGE;
      }
      break;
    }
    if (level.segments.length > best) {
      best = level.segments.length;
      inputs = level.segments;
      at = l;
    }
  }
  if (best < AUTOMERGE) return [];
  const reads: Array<{ segid: number; page: number }> = [];
  // Work left once a level's inputs are all merged goes on at the next level (where their output went).
  for (let budget = output; budget > 0 && inputs.length > 0; ) {
    const left = inputs.reduce((n, s) => n + (s.last - s.first + 1), 0);
    for (const segment of inputs) {
      const share = Math.ceil((2 * budget * (segment.last - segment.first + 1)) / Math.max(1, left)) + 1;
      for (let page = segment.first; page <= Math.min(segment.last, segment.first + share - 1); page++) {
        if (reads.length >= max) return reads;
        reads.push({ segid: segment.segid, page });
      }
    }
    budget -= left;
    at++;
    inputs = levels[at]?.segments ?? [];
  }
  return reads;
}
