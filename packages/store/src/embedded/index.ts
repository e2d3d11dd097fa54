/** The embedded adapters: one machine, no server, no cloud account. */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Stores } from "../ports.js";
import { FileBlobStore } from "./file-blob-store.js";
import { SqliteMetaStore } from "./sqlite-meta-store.js";

export { FileBlobStore, SqliteMetaStore };

/** Both ports on one data folder: `blobs/` for bytes, `meta.sqlite` for the rest. */
export function embeddedStores(dataDir: string): Stores & { close(): void } {
  mkdirSync(join(dataDir, "blobs"), { recursive: true });
  const meta = new SqliteMetaStore(join(dataDir, "meta.sqlite"));
  return { blobs: new FileBlobStore(join(dataDir, "blobs")), meta, close: () => meta.close() };
}
