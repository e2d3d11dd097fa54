/** @pisync/core: pisync's use cases over the storage ports (no HTTP, no AWS). */
export { Appender, type AppendLimits, type AppendRequest, type AppendResult, DEFAULT_APPEND_LIMITS } from "./append.js";
export * from "./errors.js";
export { contentText, isCutPreview, previewOf } from "./ingest.js";
export { blobKey, checkId, checkSessionId, SAFE_ID, SESSION_ID, uploadKey } from "./keys.js";
export { Reader, type SessionView, type TreeNode, viewOf } from "./reader.js";
export { SearchIndexer, storedLines } from "./search-indexer.js";
export { MAX_SEGMENTS } from "./segments.js";
export { type PathFacts, pathFacts, pathTotals } from "./share-view.js";
export {
  DEFAULT_SHARE_LIMITS,
  newShareKeys,
  parseShareKeys,
  type ShareKeys,
  type ShareLimits,
  type ShareStatus,
  Shares,
} from "./shares.js";
export { createToken, hashToken, Tokens } from "./tokens.js";
