/**
 * The columns a persisted tree index stores its records in: one array per field, with types,
 * roles and facts as tables of their distinct values and parents as positions of the record
 * holding that id. A large session's records then parse in a fraction of the time their JSON
 * objects take (most values repeat), and decode to the same records, field for field.
 */
import type { LineRecord } from "@pisync/format";

/** The records of an index, as columns (JSON-able). */
export interface RecordColumns {
  line: number[];
  offset: number[];
  length: number[];
  value: number[];
  isObject: number[];
  /** Positions in `names` (`-1`: absent). */
  type: number[];
  role: number[];
  names: string[];
  id: (string | null)[];
  /** Position of the record whose id it is; `-1` null, `-2` absent, `-3` in `parentText`. */
  parent: number[];
  parentText: Record<number, string>;
  timestamp: (string | null)[];
  /** Positions in `factTable` (`-1`: absent). */
  facts: number[];
  factTable: unknown[];
  /** Fields of no column, by record position. */
  rest: Record<number, Record<string, unknown>>;
}

/** Fields a column holds; `index` and `v1` are the built index's own, never stored. */
const COLUMNS = new Set([
  "line",
  "offset",
  "length",
  "value",
  "isObject",
  "type",
  "role",
  "id",
  "parentId",
  "timestamp",
  "facts",
]);
const BUILT = new Set(["index", "v1"]);

/** A table of distinct values, by a key of each. */
function table<T>(keyOf: (value: T) => string) {
  const at = new Map<string, number>();
  const values: T[] = [];
  return {
    values,
    indexOf(value: T | undefined): number {
      if (value === undefined) return -1;
      const key = keyOf(value);
      let i = at.get(key);
      if (i === undefined) {
        i = values.length;
        values.push(value);
        at.set(key, i);
      }
      return i;
    },
  };
}

const isInt = (n: unknown): n is number => Number.isSafeInteger(n);

/** The records as columns. */
export function toColumns(records: readonly LineRecord[]): RecordColumns {
  const names = table<string>((s) => s);
  const facts = table<unknown>((f) => JSON.stringify(f));
  const firstWithId = new Map<string, number>();
  const c: RecordColumns = {
    line: [],
    offset: [],
    length: [],
    value: [],
    isObject: [],
    type: [],
    role: [],
    names: names.values,
    id: [],
    parent: [],
    parentText: {},
    timestamp: [],
    facts: [],
    factTable: facts.values,
    rest: {},
  };
  records.forEach((r, i) => {
    // Defined, not assigned: a `__proto__` field stays a field.
    const rest: Record<string, unknown> = {};
    const odd = (key: string, value: unknown) => {
      Object.defineProperty(rest, key, { value, enumerable: true, writable: true, configurable: true });
    };
    for (const key of Object.keys(r)) {
      if (!COLUMNS.has(key) && !BUILT.has(key)) odd(key, (r as unknown as Record<string, unknown>)[key]);
    }
    c.line.push(r.line);
    c.offset.push(r.offset);
    c.length.push(r.length);
    c.value.push(isInt(r.value) ? r.value : -1);
    if (!isInt(r.value)) odd("value", r.value);
    c.isObject.push(r.isObject ? 1 : 0);
    if (typeof r.isObject !== "boolean") odd("isObject", r.isObject);
    const name = (v: unknown, key: string) => {
      if (v === undefined || typeof v === "string") return names.indexOf(v);
      odd(key, v);
      return -1;
    };
    c.type.push(name(r.type, "type"));
    c.role.push(name(r.role, "role"));
    const text = (v: unknown, key: string) => {
      if (v === undefined) return null;
      if (typeof v === "string") return v;
      odd(key, v);
      return null;
    };
    c.id.push(text(r.id, "id"));
    c.timestamp.push(text(r.timestamp, "timestamp"));
    const p = r.parentId as unknown;
    const holder = typeof p === "string" ? firstWithId.get(p) : undefined;
    if (p === null) c.parent.push(-1);
    else if (p === undefined) c.parent.push(-2);
    else if (holder !== undefined) c.parent.push(holder);
    else if (typeof p === "string") {
      c.parent.push(-3);
      c.parentText[i] = p;
    } else {
      c.parent.push(-2);
      odd("parentId", p);
    }
    c.facts.push(r.facts === undefined ? -1 : facts.indexOf(r.facts));
    if (typeof r.id === "string" && !firstWithId.has(r.id)) firstWithId.set(r.id, i);
    if (Object.keys(rest).length) c.rest[i] = rest;
  });
  return c;
}

/** The records of columns; undefined when they do not hold together. */
export function fromColumns(c: RecordColumns): LineRecord[] | undefined {
  const n = c.line?.length;
  const columns = [c.offset, c.length, c.value, c.isObject, c.type, c.role, c.id, c.parent, c.timestamp, c.facts];
  if (!Array.isArray(c.line) || columns.some((col) => !Array.isArray(col) || col.length !== n)) return undefined;
  if (!Array.isArray(c.names) || !Array.isArray(c.factTable)) return undefined;
  const records: LineRecord[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const p = c.parent[i] as number;
    const parentId = p === -1 ? null : p === -3 ? c.parentText?.[i] : p >= 0 && p < i ? c.id[p] : undefined;
    if (p >= i || (p >= 0 && typeof parentId !== "string") || (p === -3 && typeof parentId !== "string"))
      return undefined;
    const r = {
      line: c.line[i],
      offset: c.offset[i],
      length: c.length[i],
      value: c.value[i],
      isObject: c.isObject[i] === 1,
      parentId,
    } as LineRecord;
    if (p === -2) delete (r as Partial<LineRecord>).parentId;
    const type = c.type[i] as number;
    if (type >= 0) r.type = c.names[type];
    const id = c.id[i];
    if (id !== null) r.id = id;
    const timestamp = c.timestamp[i];
    if (timestamp !== null) r.timestamp = timestamp;
    const role = c.role[i] as number;
    if (role >= 0) r.role = c.names[role];
    const facts = c.facts[i] as number;
    // Each record its own copy: a table's value is never shared between two records.
    if (facts >= 0) {
      const value = c.factTable[facts];
      const copy = Array.isArray(value)
        ? [...value]
        : typeof value === "object" && value !== null
          ? { ...value }
          : value;
      r.facts = copy as LineRecord["facts"];
    }
    const rest = c.rest?.[i];
    // Defined, not assigned: a `__proto__` key read from JSON stays a plain field.
    if (rest)
      for (const [key, value] of Object.entries(rest))
        Object.defineProperty(r, key, { value, enumerable: true, writable: true, configurable: true });
    records[i] = r;
  }
  return records;
}
