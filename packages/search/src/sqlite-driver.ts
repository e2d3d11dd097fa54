/**
 * The part of a SQLite driver the search index uses: better-sqlite3's API, narrowed. The
 * embedded adapter passes what `openSqlite` opens (node:sqlite, or better-sqlite3 on Node 20);
 * the AWS adapter passes a WebAssembly build shaped like it (`aws/wasm-sqlite.ts`), so all
 * run the same statements.
 */

import type { SqliteRunResult, SqliteStatement as StoreStatement } from "@pisync/store/sqlite";

/** What a statement's `run` reports. */
export type RunResult = SqliteRunResult;

/** A prepared statement: positional parameters, or one object of named ones (`@name` → `name`). */
export type SqliteStatement = Omit<StoreStatement, "pluck">;

/** An open database. */
export interface SqliteDriver {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  pragma(source: string): unknown;
  /** Defines a SQL function of one argument on this connection (a throw fails the statement that calls it). */
  function(name: string, fn: (arg: unknown) => number): unknown;
  /** Wraps `fn` in a transaction (a savepoint when nested); a throw rolls it back. */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  close(): void;
}
