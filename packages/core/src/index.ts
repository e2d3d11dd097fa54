/** @pisync/core: pisync's use cases over the storage ports (no HTTP, no AWS). */

/** JSON of values nested past the call stack (a context holding a deep line pi kept). */
export { stringifyJson } from "@pisync/format";
// The records the share use cases take and return, so that their callers need not reach into the store.
export type { SessionHead, ShareRecord } from "@pisync/store";
export { Appender, type AppendLimits, type AppendRequest, type AppendResult, DEFAULT_APPEND_LIMITS } from "./append.js";
export { Blobs } from "./blobs.js";
export { boundedNode, boundedProblem, boundedSearchPage, boundedSummary } from "./bounds.js";
export {
  BrowserSessions,
  csrfMatches,
  csrfTokenOf,
  DEVICES_PAGE,
  type Device,
  type DeviceList,
  IDLE_DAYS,
  LOGIN_LINK_SECONDS,
  type SignedInBrowser,
  safeNextPath,
  userAgentLabel,
} from "./browser-sessions.js";
// The device-code flow's class and constants: `@pisync/core/device-codes` (loaded on first use).
export type { DeviceCodes, PendingDeviceCode, StartedDeviceCode } from "./device-codes.js";
export * from "./errors.js";
export { Identities, type Identity } from "./identity.js";
export { contentText, isCutPreview, previewOf } from "./ingest.js";
export type {
  Insights,
  InsightsReport,
  ToolGroup,
  TopSession,
  UsageGroup,
  UsageSums,
} from "./insights.js";
export {
  FIT_AFTER_DAYS,
  fitRange,
  type InsightsRange,
  insightsRange,
  MAX_INSIGHTS_DAYS,
  sinceDay,
} from "./insights-range.js";
export { blobKey, checkId, checkSessionId, SAFE_ID, SESSION_ID, uploadKey } from "./keys.js";
export {
  checkFilter,
  Library,
  type LibraryFilter,
  type LibraryPage,
  matches,
  ownerView,
  type SharesPage,
  searchText,
  titleOf,
} from "./library.js";
export { Lru } from "./lru.js";
export { Memo } from "./memo.js";
export { PERSIST_MIN_LINES } from "./persisted-index.js";
export { DEFAULT_READER_CACHE, type DeleteReceipt, Reader, type ReaderCacheLimits } from "./reader.js";
export { MAX_SLOT_BYTES, type RenameRequest, type RenameResult } from "./rename.js";
export { type IndexFailure, SearchIndexer, type StepOutcome, storedLines } from "./search-indexer.js";
export { MAX_SEGMENTS } from "./segments.js";
export { fitUtf8, PAGE_TEXT_BYTES, SessionPages } from "./session-pages.js";
export {
  type BranchDocument,
  FIND_PAGE,
  PAGE_ENTRIES,
  type PageRequest,
  type PositionedBranch,
  type ShareMasker,
  ShareReading,
  type TreeMatches,
} from "./share-reading.js";
export { type PathFacts, pathFacts, pathTotals } from "./share-view.js";
export {
  DEFAULT_SHARE_LIMITS,
  newShareKeys,
  parseShareKeys,
  type ShareKeys,
  type ShareLimits,
  type SharePolicy,
  type ShareStatus,
  Shares,
  shareSession,
} from "./shares.js";
export { shownEntry } from "./shown-entry.js";
export { parseTeamRef, type TeamIndexer, TeamSearch, teamLines, teamRef, teamStores } from "./team-search.js";
export { teamOfTenant, teamTenant, teamTenants, tenantIndexer, tenantStores } from "./team-tenants.js";
export {
  DEFAULT_POLICY,
  INVITE_SECONDS,
  type TeamSessionCard,
  Teams,
  type TeamView,
} from "./teams.js";
export { createToken, hashToken, TOUCH_EVERY_MS, Tokens } from "./tokens.js";
export { Uploads, type UploadTicket } from "./uploads.js";
export {
  type Finding,
  SWEEP_MIN_AGE_MS,
  type TemporaryFiles,
  type VerifyOptions,
  type VerifyReport,
  verifyStores,
} from "./verify.js";
export { type SessionView, type TreeNode, viewOf } from "./views.js";
export {
  advanceWriters,
  MAX_WRITER_RUNS,
  namedWriters,
  REMOVED_DEVICE,
  tipDevices,
  UNKNOWN_DEVICE,
  type WriterView,
  writerAt,
  writersView,
} from "./writers.js";
