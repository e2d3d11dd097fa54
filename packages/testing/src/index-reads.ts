/**
 * Store wrappers for the persisted tree index's tests and benchmark: one counts what a reader
 * reads of the index pages, the other hides every persisted index (what a rebuild answers).
 */
import { PREFIXES, type Stores } from "@pisync/store";

/** The stores with the index pages and page records read through them counted. */
export function countingPages(stores: Stores): { stores: Stores; read: { pages: number; records: number } } {
  const read = { pages: 0, records: 0 };
  const meta = Object.create(stores.meta) as Stores["meta"];
  meta.getPages = async (...args) => {
    const pages = await stores.meta.getPages(...args);
    read.pages += pages.length;
    read.records += pages.reduce((n, p) => n + p.records.length, 0);
    return pages;
  };
  return { stores: { meta, blobs: stores.blobs }, read };
}

/** The stores as if no tree index were ever persisted: none is listed, none is written. */
export function withoutPersistedIndexes(stores: Stores): Stores {
  const blobs = Object.create(stores.blobs) as Stores["blobs"];
  blobs.list = async (prefix) => (prefix.startsWith(PREFIXES.indexes) ? [] : stores.blobs.list(prefix));
  blobs.put = async (key, body) => (key.startsWith(PREFIXES.indexes) ? undefined : stores.blobs.put(key, body));
  return { meta: stores.meta, blobs };
}
