/**
 * SQLite for the embedded store and the embedded search: Node's own `node:sqlite` where the
 * running Node has it (22.16 and later: nothing is built or downloaded at install), else
 * better-sqlite3 (Node 20, and 23; an optional dependency npm installs only on those Nodes, see
 * `node20-sqlite/package.json`; loaded only then). Both are shaped as the part of
 * better-sqlite3's API the adapters use, so every statement runs unchanged on either, on the
 * same database files.
 *
 * `PISYNC_SQLITE=builtin` or `PISYNC_SQLITE=better-sqlite3` picks one (the tests run the
 * contract suites on each); otherwise the built-in one when there is one.
 */
import { createRequire } from "node:module";

/** What a statement's `run` reports. */
export interface SqliteRunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

/** A prepared statement: positional parameters, or one object of named ones (`@name` → `name`). */
export interface SqliteStatement {
  run(...params: unknown[]): SqliteRunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** This statement, answering each row's first column instead of the row. */
  pluck(): SqliteStatement;
}

/** An open database. */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  /** `PRAGMA source`: its rows, or with `simple` the first row's first column. */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  /** Defines a SQL function on this connection (its arity is the function's; a throw fails the statement). */
  function(name: string, fn: (...args: never[]) => unknown): unknown;
  /** Wraps `fn` in a transaction (a savepoint when nested); a throw rolls it back. */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>;
  close(): void;
}

/** A function run in a transaction: deferred (`BEGIN`), or `immediate` (`BEGIN IMMEDIATE`: the write lock first). */
export type SqliteTransaction<A extends unknown[], R> = ((...args: A) => R) & { immediate(...args: A): R };

/** Which SQLite binding opens databases in this process. */
export type SqliteEngine = "builtin" | "better-sqlite3";

// node:sqlite's types, as far as the adapter uses them (Node 20's @types do not have them).
interface NodeStatement {
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  setAllowUnknownNamedParameters(enabled: boolean): void;
}
interface NodeDatabase {
  prepare(sql: string): NodeStatement;
  exec(sql: string): void;
  function(name: string, fn: (...args: never[]) => unknown): void;
  readonly isTransaction: boolean;
  close(): void;
}
type NodeSqlite = { DatabaseSync: new (path: string) => NodeDatabase };

let builtin: NodeSqlite | null | undefined;

/** `node:sqlite`, when this Node has it without a flag; loaded without its experimental warning. */
function loadBuiltin(): NodeSqlite | undefined {
  if (builtin === undefined) {
    const emit = process.emitWarning;
    // The one warning node:sqlite prints on load says it is experimental: not the user's concern.
    process.emitWarning = () => {};
    try {
      const module = (process.getBuiltinModule?.("node:sqlite") as NodeSqlite | undefined) ?? null;
      builtin = module && hasWhatTheAdapterUses(module) ? module : null;
    } catch {
      builtin = null;
    } finally {
      process.emitWarning = emit;
    }
  }
  return builtin ?? undefined;
}

/**
 * Whether this node:sqlite has what the adapter calls: `isTransaction` (Node 22.16) and
 * `setAllowUnknownNamedParameters` (22.15). An older one is passed over for better-sqlite3.
 */
function hasWhatTheAdapterUses(module: NodeSqlite): boolean {
  const db = new module.DatabaseSync(":memory:");
  try {
    return (
      typeof db.isTransaction === "boolean" &&
      typeof db.prepare("SELECT 1").setAllowUnknownNamedParameters === "function"
    );
  } finally {
    db.close();
  }
}

/** The binding {@link openSqlite} uses here (see the module's comment for how it is chosen). */
export function sqliteEngine(): SqliteEngine {
  const asked = process.env.PISYNC_SQLITE;
  if (asked === "better-sqlite3") return asked;
  if (loadBuiltin()) return "builtin";
  if (asked === "builtin") {
    throw new Error("PISYNC_SQLITE=builtin: this Node has no node:sqlite the adapter can use (22.16 or later has)");
  }
  return "better-sqlite3";
}

/**
 * Opens (creating when missing) the database at `path`, waiting up to 5 s for another
 * connection's lock as better-sqlite3 does by default.
 */
export function openSqlite(path: string): SqliteDatabase {
  if (sqliteEngine() === "better-sqlite3") {
    // Loaded only here: on a Node with node:sqlite the addon is never loaded.
    let Better: new (path: string) => SqliteDatabase;
    try {
      Better = createRequire(import.meta.url)("better-sqlite3");
    } catch (error) {
      throw new Error(
        "better-sqlite3 is not installed (an optional dependency; its install may have failed): use Node.js 22.16 or later, whose node:sqlite needs nothing installed, or run `npm rebuild better-sqlite3`",
        { cause: error },
      );
    }
    return new Better(path);
  }
  return new BuiltinDatabase(mapped(() => new (loadBuiltin() as NodeSqlite).DatabaseSync(path)));
}

/**
 * SQLite's result codes by number, named as better-sqlite3 names its errors: the primary ones,
 * and the extended ones that matter here (an extended code not listed takes its primary name).
 */
const CODE_NAMES: Record<number, string> = {
  1: "SQLITE_ERROR",
  2: "SQLITE_INTERNAL",
  3: "SQLITE_PERM",
  4: "SQLITE_ABORT",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  7: "SQLITE_NOMEM",
  8: "SQLITE_READONLY",
  9: "SQLITE_INTERRUPT",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  17: "SQLITE_SCHEMA",
  18: "SQLITE_TOOBIG",
  19: "SQLITE_CONSTRAINT",
  20: "SQLITE_MISMATCH",
  21: "SQLITE_MISUSE",
  23: "SQLITE_AUTH",
  25: "SQLITE_RANGE",
  26: "SQLITE_NOTADB",
  261: "SQLITE_BUSY_RECOVERY",
  517: "SQLITE_BUSY_SNAPSHOT",
  773: "SQLITE_BUSY_TIMEOUT",
  262: "SQLITE_LOCKED_SHAREDCACHE",
  518: "SQLITE_LOCKED_VTAB",
  266: "SQLITE_IOERR_READ",
  522: "SQLITE_IOERR_SHORT_READ",
  778: "SQLITE_IOERR_WRITE",
  1034: "SQLITE_IOERR_FSYNC",
  3338: "SQLITE_IOERR_NOMEM",
  275: "SQLITE_CONSTRAINT_CHECK",
  787: "SQLITE_CONSTRAINT_FOREIGNKEY",
  1299: "SQLITE_CONSTRAINT_NOTNULL",
  1555: "SQLITE_CONSTRAINT_PRIMARYKEY",
  2067: "SQLITE_CONSTRAINT_UNIQUE",
  1032: "SQLITE_READONLY_DBMOVED",
};

/**
 * `work`, with node:sqlite's errors as better-sqlite3 reports them: `code` is SQLite's own
 * name (`SQLITE_BUSY_SNAPSHOT`, `SQLITE_FULL`…), which the store's error classes read.
 * Anything else (a SQL function's own throw, a binding error) passes through unchanged.
 */
function mapped<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    const e = error as { code?: unknown; errcode?: unknown };
    if (e?.code === "ERR_SQLITE_ERROR" && typeof e.errcode === "number") {
      e.code = CODE_NAMES[e.errcode] ?? CODE_NAMES[e.errcode & 0xff] ?? e.code;
    }
    throw error;
  }
}

/** Parameters as better-sqlite3 binds them: `undefined` is NULL (copied only when one is). */
function bindable(params: unknown[]): unknown[] {
  const holdsUndefined = (p: unknown) =>
    p === undefined ||
    (p !== null && typeof p === "object" && !ArrayBuffer.isView(p) && Object.values(p).includes(undefined));
  if (!params.some(holdsUndefined)) return params;
  return params.map((p) => {
    if (p === undefined) return null;
    if (p === null || typeof p !== "object" || ArrayBuffer.isView(p)) return p;
    const named: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(p)) named[k] = v === undefined ? null : v;
    return named;
  });
}

class BuiltinStatement implements SqliteStatement {
  private plucked = false;

  constructor(private readonly statement: NodeStatement) {
    // better-sqlite3 ignores keys of a parameter object the statement does not name.
    statement.setAllowUnknownNamedParameters(true);
  }

  run(...params: unknown[]): SqliteRunResult {
    const r = mapped(() => this.statement.run(...bindable(params)));
    return { changes: Number(r.changes), lastInsertRowid: r.lastInsertRowid };
  }

  get(...params: unknown[]): unknown {
    const row = mapped(() => this.statement.get(...bindable(params)));
    return this.plucked && row ? Object.values(row)[0] : row;
  }

  all(...params: unknown[]): unknown[] {
    const rows = mapped(() => this.statement.all(...bindable(params)));
    return this.plucked ? rows.map((row) => Object.values(row as object)[0]) : rows;
  }

  pluck(): SqliteStatement {
    this.plucked = true;
    return this;
  }
}

class BuiltinDatabase implements SqliteDatabase {
  private depth = 0;

  constructor(private readonly db: NodeDatabase) {
    this.exec("PRAGMA busy_timeout = 5000");
  }

  prepare(sql: string): SqliteStatement {
    return new BuiltinStatement(mapped(() => this.db.prepare(sql)));
  }

  exec(sql: string): void {
    mapped(() => this.db.exec(sql));
  }

  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    const rows = this.prepare(`PRAGMA ${source}`).all();
    return options.simple ? (rows[0] === undefined ? undefined : Object.values(rows[0] as object)[0]) : rows;
  }

  function(name: string, fn: (...args: never[]) => unknown): this {
    this.db.function(name, fn);
    return this;
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R> {
    const run =
      (begin: string) =>
      (...args: A): R => {
        // better-sqlite3's rule: outside a transaction (its own or one begun by `exec`) a
        // transaction, inside one a savepoint.
        const outer = !this.db.isTransaction;
        const savepoint = `pisync_${this.depth}`;
        this.exec(outer ? begin : `SAVEPOINT ${savepoint}`);
        this.depth++;
        let result: R;
        try {
          result = fn(...args);
          this.exec(outer ? "COMMIT" : `RELEASE ${savepoint}`);
        } catch (error) {
          // A failed COMMIT (a busy or full database) leaves the transaction open: undone too.
          if (!outer || this.db.isTransaction) {
            try {
              this.exec(outer ? "ROLLBACK" : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
            } catch {
              // SQLite rolled it back itself (a full disk, an interrupt): the first error is the one.
            }
          }
          throw error;
        } finally {
          this.depth--;
        }
        return result;
      };
    return Object.assign(run("BEGIN"), { immediate: run("BEGIN IMMEDIATE") });
  }

  close(): void {
    this.db.close();
  }
}
