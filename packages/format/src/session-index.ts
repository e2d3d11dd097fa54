/**
 * The tree index of a session file: one small record per line, built without keeping entry
 * content. Full entries are parsed on demand ({@link SessionIndex.entry}), so rebuilding a
 * context reads only the entries on its path. The byte scan that builds it from a file is
 * index-scan.ts; the service builds it from stored records.
 */
import { headerVersion } from "./header.js";
import { type Json, type LineRecord, recordProblem } from "./lines.js";
import { CURRENT_SESSION_VERSION, migrateEntry, migrateRole, type V1Links, v1EntryId } from "./migrate.js";
import type { Problem } from "./problems.js";
import type { SessionHeader } from "./schema.js";

export type { EntryFacts } from "./lines.js";

/** A line record placed in the index (role migrated, v1 links applied). */
export interface EntryRecord extends LineRecord {
  /** Position in {@link SessionIndex.records}. */
  index: number;
  /** Set for v1 files: the links pi's migration gives this entry. */
  v1?: V1Links;
}

/** What an index is made of: the records of a file's lines and a way to read an entry's content. */
export interface IndexParts {
  /** The header as written, if the file has one. */
  header: SessionHeader | undefined;
  /** The format version, when known without the header (an index rebuilt from stored records). */
  version?: number;
  headerLine?: number;
  /** Records of the lines after the header, in file order; the index takes them over (and numbers them). */
  records: LineRecord[];
  /** Line-level problems already found. */
  problems: readonly Problem[];
  /** Bytes covered by complete lines. */
  completeLength: number;
  /** Parses a record's line (not yet migrated). */
  load: (record: LineRecord) => unknown;
  /** Entries already parsed, by line number (not yet migrated). */
  cache?: Map<number, Json>;
  /**
   * The path from a root to the last record, root first, when the scan already walked it (the
   * records themselves, not copies). Taken only when it must equal the parent walk's answer: ids
   * unique, v2 or later.
   */
  defaultPath?: LineRecord[];
}

/** Records handled between two pauses of a stepwise build (a few milliseconds of work). */
const CHUNK = 32_768;
/** Marks a build left to {@link SessionIndex.build}. */
const STEPWISE = Symbol("stepwise");
type Stepwise = typeof STEPWISE;

/** A session file, indexed. Immutable once built. */
export class SessionIndex {
  /** The header line's JSON, as read (with `version` set to the current one, as pi reports it). */
  readonly header: SessionHeader | undefined;
  /** The header's format version as written (1 when absent). */
  readonly version: number;
  /** Every JSON value after the header but `null`s and extra headers, in file order. */
  readonly records: EntryRecord[];
  readonly problems: Problem[];
  /** Bytes covered by complete lines; anything after is an unterminated line, held back. */
  readonly completeLength: number;
  /** Line number of the header, when there is one. */
  readonly headerLine: number | undefined;
  /** Whether every parent in the file comes before its children (as pi writes): then no parent chain can loop. */
  get parentsFirst(): boolean {
    return this.built.parentsFirst;
  }
  private readonly load: (record: LineRecord) => unknown;
  private readonly cache: Map<number, Json>;
  private readonly byIdMap = new Map<string, number>();
  /**
   * What is worked out once per index and shared by its views (a view is an object whose
   * prototype is the index: an object held here is the same for all of them).
   */
  private readonly derived: {
    children?: Map<string | null, number[]>;
    leafIds?: readonly string[];
    defaultLeaf?: { length: number; record: EntryRecord | undefined };
  } = {};
  /** What the build found; set by {@link SessionIndex.indexing}, in one go or a chunk at a time. */
  private readonly built: {
    parentsFirst: boolean;
    defaultPath?: readonly EntryRecord[];
    /** One flag per record: whether an entry names it as parent (the last line of each id counts). */
    hasChild: Uint8Array;
  };
  /** See {@link IndexParts.defaultPath}. */
  get defaultPath(): readonly EntryRecord[] | undefined {
    return this.built.defaultPath;
  }

  /**
   * Builds an index in one go (a million lines take about a second: a server builds a large
   * one with {@link SessionIndex.build} instead).
   */
  constructor(parts: IndexParts);
  /** @internal With `stepwise`, the build is left to the caller, a step at a time ({@link SessionIndex.build}). */
  constructor(parts: IndexParts, stepwise: Stepwise);
  constructor(parts: IndexParts, stepwise?: Stepwise) {
    this.load = parts.load;
    this.completeLength = parts.completeLength;
    this.headerLine = parts.headerLine;
    this.problems = [...parts.problems];
    const written = parts.header;
    // Without a header, the entries say which version they are: ids mean v2 or later.
    this.version =
      parts.version !== undefined
        ? parts.version
        : written
          ? headerVersion(written)
          : parts.records.some((r) => r.id !== undefined)
            ? CURRENT_SESSION_VERSION
            : 1;
    this.header = written ? { ...written, version: CURRENT_SESSION_VERSION } : undefined;
    // The records become the index's own (no copy: there can be millions).
    this.records = parts.records as EntryRecord[];
    this.cache = new Map();
    this.built = { parentsFirst: true, hasChild: new Uint8Array(this.records.length) };
    if (stepwise !== STEPWISE) for (const _ of this.indexing(parts)); // runs every step at once
  }

  /**
   * Builds a large index a chunk of records at a time, awaiting `pause` between chunks so that
   * no step holds the thread long (a server keeps answering while it builds). The path to the
   * default leaf is walked too (when it is the only walk that answer can be), so a page of the
   * default branch needs no walk of its own. Same index as the constructor's.
   */
  static async build(parts: IndexParts, pause: () => Promise<void>): Promise<SessionIndex> {
    const index = new SessionIndex(parts, STEPWISE);
    for (const _ of index.indexing(parts)) await pause();
    for (const _ of index.walkDefault()) await pause();
    return index;
  }

  /** The build, a generator that yields after each chunk of records. */
  private *indexing(parts: IndexParts): Generator<void> {
    for (let index = 0; index < this.records.length; index++) {
      const record = this.records[index];
      record.index = index;
      record.v1 = undefined;
      if (this.version < 3 && record.role !== undefined) record.role = migrateRole(record.role, this.version) as string;
      const problem = recordProblem(record, this.version);
      if (problem) this.problems.push(problem);
      if (index % CHUNK === CHUNK - 1) yield;
    }
    if (this.version < 2) this.migrateV1();
    // v1 entries get their ids from the migration above, so nothing parsed before it is kept.
    if (this.version >= 2)
      for (const [line, entry] of parts.cache ?? []) this.cache.set(line, migrateEntry(entry, this.version));
    let duplicates = 0;
    // Earlier lines of a repeated id: they are not the id's entry, so they are nobody's child.
    const replaced = new Set<number>();
    for (const record of this.records) {
      if (record.index % CHUNK === CHUNK - 1) yield;
      if (record.id === undefined) continue;
      const earlier = this.byIdMap.get(record.id);
      if (earlier !== undefined) {
        duplicates++;
        replaced.add(earlier);
        this.problems.push({
          kind: "duplicate-id",
          line: record.line,
          id: record.id,
          message: `id ${record.id} is used again at line ${record.line}; the later line wins`,
        });
      }
      this.byIdMap.set(record.id, record.index);
    }
    let parentsFirst = true;
    const { hasChild } = this.built;
    for (const record of this.records) {
      if (record.index % CHUNK === CHUNK - 1) yield;
      if (record.parentId === null) continue;
      const parent = this.byIdMap.get(record.parentId);
      if (parent !== undefined && record.id !== undefined && !replaced.has(record.index)) hasChild[parent] = 1;
      if (parent === undefined) {
        this.problems.push({
          kind: "missing-parent",
          line: record.line,
          id: record.id,
          message: `the parent ${record.parentId} of ${record.id ?? `line ${record.line}`} is not in the file`,
        });
      } else if (parent >= record.index) {
        parentsFirst = false;
      }
    }
    this.built.parentsFirst = parentsFirst;
    // With unique ids, parents first and no v1 ids to give, the scan's walk is the parent walk.
    const path = parts.defaultPath as EntryRecord[] | undefined;
    this.built.defaultPath =
      path?.length &&
      this.version >= 2 &&
      parentsFirst &&
      duplicates === 0 &&
      path[path.length - 1] === this.defaultLeaf
        ? path
        : undefined;
  }

  /** The parent walk from the default leaf, a chunk at a time: kept as {@link defaultPath}. */
  private *walkDefault(): Generator<void> {
    // Parents first: every step goes to an earlier line, so the walk cannot loop.
    if (this.built.defaultPath || !this.parentsFirst) return;
    const reversed: EntryRecord[] = [];
    for (let current = this.defaultLeaf; current; current = this.parentOf(current)) {
      reversed.push(current);
      if (reversed.length % CHUNK === 0) yield;
    }
    if (reversed.length) this.built.defaultPath = reversed.reverse();
  }

  /** pi's v1 → v2 migration, on the records: ids by line, a linear parent chain. */
  private migrateV1(): void {
    const byValue = new Map(this.records.map((r) => [r.value, r]));
    let previous: string | null = null;
    for (const record of this.records) {
      if (!record.isObject) continue;
      const id = v1EntryId(record.line);
      const links: V1Links = { id, parentId: previous };
      const target = record.facts?.firstKeptEntryIndex;
      if (record.type === "compaction" && typeof target === "number") {
        const targetRecord = byValue.get(target);
        // pi reads the target's id while migrating in order: only earlier entries have one yet.
        if (targetRecord && targetRecord.index < record.index && targetRecord.isObject) {
          links.firstKeptEntryId = targetRecord.v1?.id;
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

  /**
   * The entry a session continues from on open: the last entry in file order that has an id.
   * Values without an id (oh-my-pi's title slot, junk) are on no branch and never a leaf (the
   * rule rho writes by and that pisync follows: pi would take the last value whatever it is, and
   * answer an empty context when it has no id). See docs/format.md.
   */
  get defaultLeaf(): EntryRecord | undefined {
    const n = this.records.length;
    if (this.derived.defaultLeaf?.length !== n) {
      let at = n - 1;
      while (at >= 0 && this.records[at].id === undefined) at--;
      this.derived.defaultLeaf = { length: n, record: at >= 0 ? this.records[at] : undefined };
    }
    return this.derived.defaultLeaf.record;
  }

  /** The default leaf's id; `null` when no entry of the file has an id. */
  get defaultLeafId(): string | null {
    return this.defaultLeaf?.id ?? null;
  }

  /**
   * Hands the index entries read elsewhere (by line number, as written): for an index built
   * from stored records, whose lines live in another store.
   */
  prime(entries: Iterable<[line: number, entry: Json]>): void {
    for (const [line, entry] of entries) {
      const record = this.atLine(line);
      if (record?.isObject) this.cache.set(line, migrateEntry(entry, this.version, record.v1));
    }
  }

  /** The record of line `line`, if any: records are in file order, so a binary search finds it. */
  atLine(line: number): EntryRecord | undefined {
    let low = 0;
    let high = this.records.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const record = this.records[middle];
      if (record.line === line) return record;
      if (record.line < line) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }

  /** The full entry of a record, parsed from its line and migrated to the current version. */
  entry(record: EntryRecord): Json {
    const cached = this.cache.get(record.line);
    if (cached) return cached;
    const value = this.load(record) as Json;
    if (!record.isObject) return value;
    return migrateEntry(value, this.version, record.v1);
  }

  /** Records whose parent is `parentId` (`null`: the roots, including orphans whose parent is missing). */
  children(parentId: string | null): EntryRecord[] {
    if (!this.derived.children) {
      const map = new Map<string | null, number[]>();
      for (const [, at] of this.byIdMap) {
        const record = this.records[at];
        const key = record.parentId !== null && this.byIdMap.has(record.parentId) ? record.parentId : null;
        const list = map.get(key);
        if (list) list.push(at);
        else map.set(key, [at]);
      }
      for (const list of map.values()) list.sort((a, b) => a - b);
      this.derived.children = map;
    }
    return (this.derived.children.get(parentId) ?? []).map((at) => this.records[at]);
  }

  /** Entry ids that are nobody's parent: the tips of branches. */
  leafIds(): string[] {
    this.derived.leafIds ??= this.findLeafIds();
    return this.derived.leafIds.slice();
  }

  private findLeafIds(): string[] {
    const { hasChild } = this.built;
    const leaves: string[] = [];
    for (const [id, at] of this.byIdMap) if (!hasChild[at]) leaves.push(id);
    return leaves;
  }
}
