/**
 * @pisync/search: search over a user's sessions — the query language, the search port, and the
 * documents a session yields. Adapters: `@pisync/search/embedded` (SQLite FTS5) and
 * `@pisync/search/embedded-threaded` (the same, written by a worker thread: the Node server's).
 */
export { batchOf, MAX_DOCUMENT_CHARS } from "./documents.js";
export type * from "./port.js";
export {
  ftsMatch,
  MAX_PREFIXES,
  MAX_QUERY_LENGTH,
  MAX_TERMS,
  parseQuery,
  QueryError,
  QueryText,
  type Role,
  type SearchQuery,
  SearchTimeout,
  type Term,
} from "./query.js";
export { snippetOf } from "./snippet.js";
