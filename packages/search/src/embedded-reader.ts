/**
 * A search reader thread of {@link SearchThreads} on the embedded index: runs searches on its
 * own read connection to the index file, off the server's event loop. Stored lines (for
 * snippets) are asked of the owning thread, which holds the store; cutting snippets from them
 * happens here.
 */
import { workerData } from "node:worker_threads";
import { DEFAULT_BOUNDS, type SearchBounds, SqliteSearchIndex } from "./embedded.js";
import type { LineSource } from "./port.js";
import { askOwner, serveSearches } from "./reader-thread.js";

/** What the embedded reader is started with. */
export interface EmbeddedReaderData {
  /** The index file (made by the owning thread first). */
  path: string;
  /** Bounds on the work of one query (default {@link DEFAULT_BOUNDS}). */
  bounds?: SearchBounds;
}

const lines: LineSource = (...args) => askOwner("lines", ...args);
const data = workerData as EmbeddedReaderData;
const index = new SqliteSearchIndex(data.path, lines, data.bounds ?? DEFAULT_BOUNDS);
serveSearches((userId, query, options) => index.search(userId, query, options));
