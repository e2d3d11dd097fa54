/**
 * The AWS search adapter: per-user SQLite FTS5 indexes kept in S3 as a base of immutable chunks
 * plus a log of changes, behind a DynamoDB pointer ({@link S3SearchIndex}), and the durable marks
 * of sessions written since they were indexed ({@link SearchMarks}).
 */
export { CHAIN_LEASE_MS, type ChainLink, PassChain } from "./chain.js";
export { commitMark, type DueMarks, SearchMarks, type SessionMark } from "./marks.js";
export { decodeManifest, type Manifest } from "./objects.js";
export { AmbiguousPointerWrite, type Pointer, Pointers } from "./pointers.js";
export {
  type CompactionReport,
  S3_SEARCH_DEFAULTS,
  S3SearchIndex,
  type S3SearchIndexConfig,
} from "./s3-search-index.js";
