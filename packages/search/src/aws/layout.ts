/**
 * Where each page of a base is (its chunk object or a patch), and the schema reads the reader
 * and the compactor share.
 */
import type { Manifest } from "./objects.js";
import { decodePages } from "./objects.js";
import type { WasmSqlite } from "./wasm-sqlite.js";

/** SQLite's page size in a file without a base yet (SQLite's default). */
export const NEW_FILE_PAGE_BYTES = 4096;
/** Where a block's bytes are in a base: its chunk, or a patch (by index). */
export const FROM_CHUNK = -1;

/** Where each block of a base is: its chunk or its last patch (see {@link Manifest.patches}). */
export interface Layout {
  /** Per block below the base's length: {@link FROM_CHUNK}, or the index of the last patch that holds it. */
  source: Int16Array;
  /** Each patch's pages, 1-based and ascending (a page's place in its object). */
  pages: number[][];
}

/** The layout of a base: every block from its chunk unless a patch holds it (the last one wins). */
export function layoutOf(manifest: Manifest | undefined): Layout {
  const source = new Int16Array(manifest ? Math.ceil(manifest.length / manifest.pageBytes) : 0).fill(FROM_CHUNK);
  const pages = (manifest?.patches ?? []).map((patch) => decodePages(patch.pages));
  pages.forEach((list, i) => {
    for (const page of list) if (page - 1 < source.length) source[page - 1] = i;
  });
  return { source, pages };
}

/** A row of `sqlite_schema`, as the hot pages' walk and the prefetches read it. */
export interface SchemaRow {
  name: string;
  rootpage: number;
  sql: string | null;
}

/** The file's tables and indexes. */
export function readSchema(driver: WasmSqlite): SchemaRow[] {
  return driver.prepare("SELECT name, rootpage, sql FROM sqlite_schema").all() as SchemaRow[];
}

/** The FTS5 tables of a schema, by name. */
export const fts5Tables = (schema: readonly SchemaRow[]) =>
  schema.filter((row) => /^CREATE VIRTUAL TABLE .* USING fts5\(/is.test(row.sql ?? "")).map((row) => row.name);

/** A name quoted for SQL. */
export const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
