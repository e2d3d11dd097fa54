/** The embedded adapters: one machine, no server, no cloud account. */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import type { Stores } from "../ports.js";
import { classifyingErrors } from "./classify.js";
import { FileBlobStore, removeStaleTemps, STALE_TEMP_MS } from "./file-blob-store.js";
import { SqliteMetaStore } from "./sqlite-meta-store.js";
import { SqliteTeamStore } from "./sqlite-team-store.js";

export { FileBlobStore, removeStaleTemps, SqliteMetaStore, SqliteTeamStore, STALE_TEMP_MS };

/** Folders the embedded store makes: readable by their owner only, like the token. */
export const PRIVATE_DIR_MODE = 0o700;
/** Files the embedded store writes. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Both ports on one data folder: `blobs/` for bytes, `meta.sqlite` for the rest. Everything
 * in it is readable by its owner only (0700 folders, 0600 files); a folder made by an older
 * version is tightened on open, and temp files a crash left (older than {@link STALE_TEMP_MS})
 * are removed. A full disk is `StorageFullError`, a database locked too long
 * `StorageUnavailableError` (see classify.ts).
 */
export function embeddedStores(
  dataDir: string,
): Stores & { meta: SqliteMetaStore; teams: SqliteTeamStore; close(): void } {
  for (const dir of [dataDir, join(dataDir, "blobs")]) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    chmodSync(dir, PRIVATE_DIR_MODE);
  }
  // SQLite gives its -wal and -shm files the database file's mode: create that one private.
  const database = join(dataDir, "meta.sqlite");
  if (!existsSync(database)) closeSync(openSync(database, "a", PRIVATE_FILE_MODE));
  for (const file of [database, `${database}-wal`, `${database}-shm`]) {
    if (existsSync(file)) chmodSync(file, PRIVATE_FILE_MODE);
  }
  removeStaleTemps(join(dataDir, "blobs"));
  const meta = classifyingErrors(new SqliteMetaStore(database));
  const teams = classifyingErrors(new SqliteTeamStore(database));
  return {
    blobs: new FileBlobStore(join(dataDir, "blobs")),
    meta,
    teams,
    close: () => {
      teams.close();
      meta.close();
    },
  };
}
export {
  openSqlite,
  type SqliteDatabase,
  type SqliteEngine,
  type SqliteStatement,
  type SqliteTransaction,
  sqliteEngine,
} from "./sqlite.js";
