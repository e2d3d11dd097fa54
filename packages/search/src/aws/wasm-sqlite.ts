/**
 * SQLite compiled to WebAssembly (node-sqlite3-wasm: FTS5 included, files through Node's `fs`,
 * no native module), shaped as the {@link SqliteDriver} the search index runs on. Loading it
 * compiles the WebAssembly module (tens of milliseconds), so it is loaded on first use
 * ({@link loadWasmSqlite}), never when a bundle that carries it starts.
 */
import type * as Sqlite from "node-sqlite3-wasm";
import type { RunResult, SqliteDriver, SqliteStatement } from "../sqlite-driver.js";

type Module = typeof Sqlite;
type Wasm = InstanceType<Module["Database"]>;
type WasmStatement = ReturnType<Wasm["prepare"]>;
type Bind = Parameters<WasmStatement["run"]>[0];

/** better-sqlite3's parameters (`run(a, b)`, or `run({ name })` for `@name`) as the WebAssembly build takes them. */
function bindOf(params: unknown[]): Bind {
  if (params.length === 1 && params[0] !== null && typeof params[0] === "object" && !ArrayBuffer.isView(params[0])) {
    return Object.fromEntries(
      Object.entries(params[0] as Record<string, unknown>).map(([k, v]) => [`@${k}`, v]),
    ) as Bind;
  }
  return params as Bind;
}

let loaded: Module | undefined;
let loading: Promise<Module> | undefined;

/** Loads the WebAssembly SQLite once; {@link WasmSqlite} can be opened after it resolved. */
export async function loadWasmSqlite(): Promise<void> {
  if (loaded) return;
  loading ??= import("node-sqlite3-wasm").then((m) => (m as unknown as { default: Module }).default ?? m);
  loaded = await loading;
}

/** A database file (or `:memory:`) opened with the WebAssembly SQLite. */
export class WasmSqlite implements SqliteDriver {
  private readonly db: Wasm;
  /** Statements by their text: the WebAssembly heap keeps them until they are finalized, so each is made once. */
  private readonly statements = new Map<string, SqliteStatement & { finalize(): void }>();
  private depth = 0;

  constructor(path: string, options: { readOnly?: boolean } = {}) {
    if (!loaded) throw new Error("the WebAssembly SQLite is not loaded yet (await loadWasmSqlite())");
    this.db = new loaded.Database(path, { readOnly: options.readOnly ?? false });
  }

  prepare(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (!statement) {
      const prepared = this.db.prepare(sql);
      // A statement whose step failed (a chunk not fetched yet) is dropped: it cannot be reset cleanly.
      const guarded =
        <R>(fn: () => R) =>
        (): R => {
          try {
            return fn();
          } catch (error) {
            this.statements.delete(sql);
            try {
              prepared.finalize();
            } catch {
              // finalize repeats the step's error: already thrown below
            }
            throw error;
          }
        };
      statement = {
        run: (...params) => guarded(() => prepared.run(bindOf(params)) as RunResult)(),
        // Read to the end: a statement stopped after its first row stays busy (and VACUUM refuses to run).
        get: (...params) => guarded(() => prepared.all(bindOf(params))[0])(),
        all: (...params) => guarded(() => prepared.all(bindOf(params)))(),
        finalize: () => prepared.finalize(),
      };
      this.statements.set(sql, statement);
    }
    return statement;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  function(name: string, fn: (arg: unknown) => number): this {
    this.db.function(name, fn as never);
    return this;
  }

  pragma(source: string): unknown {
    return this.db.all(`PRAGMA ${source}`);
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args) => {
      const savepoint = `s${this.depth}`;
      this.db.exec(this.depth === 0 ? "BEGIN" : `SAVEPOINT ${savepoint}`);
      this.depth++;
      try {
        const result = fn(...args);
        this.depth--;
        this.db.exec(this.depth === 0 ? "COMMIT" : `RELEASE ${savepoint}`);
        return result;
      } catch (error) {
        this.depth--;
        // SQLite may have rolled the whole transaction back itself (an I/O error): nothing left to undo.
        if (this.db.inTransaction) {
          this.db.exec(this.depth === 0 ? "ROLLBACK" : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
        }
        throw error;
      }
    };
  }

  /** Opens a transaction held across awaits (the AWS adapter commits once its change is published). */
  begin(): void {
    if (this.depth !== 0) throw new Error("a transaction is open already");
    this.db.exec("BEGIN");
    this.depth = 1;
  }

  /** Commits the transaction {@link begin} opened. */
  commit(): void {
    this.db.exec("COMMIT");
    this.depth = 0;
  }

  /** Rolls back whatever transaction is open (none: nothing). */
  rollbackAll(): void {
    if (this.db.inTransaction) this.db.exec("ROLLBACK");
    this.depth = 0;
  }

  /** Changes made since the database was opened (SQLite's `total_changes()`). */
  totalChanges(): number {
    return Number((this.db.get("SELECT total_changes() AS n") as { n: number }).n);
  }

  close(): void {
    for (const statement of this.statements.values()) statement.finalize();
    this.statements.clear();
    this.db.close();
  }
}
