/**
 * @pisync/store: the storage ports, their errors and the storage layout. Adapters live in the
 * subpaths `@pisync/store/embedded` (files + SQLite) and `@pisync/store/aws` (S3 + DynamoDB), so
 * that a Lambda bundle never carries SQLite and the one-machine server never needs the AWS SDK.
 */

export { eachAtOnce } from "./at-once.js";
export { cardOf } from "./card.js";
export {
  InvalidCursorError,
  NotFoundError,
  RevisionConflictError,
  StorageFullError,
  StorageUnavailableError,
} from "./errors.js";
export * from "./layout.js";
export {
  type CardFilter,
  type CardPage,
  type CardPageRequest,
  cardMatches,
  decodeListCursor,
  encodeListCursor,
  FOLDER_KEY_DEPTH,
  filterIndexOf,
  filterKeys,
  LIST_SCAN_BUDGET,
  listedCard,
  MODEL_KEY_PARTS,
  readCardPage,
} from "./listing.js";
export type * from "./ports.js";
export type * from "./ports-teams.js";
export { MAX_TEAM_MEMBERS, MAX_TEAM_PAGE, MAX_USER_TEAMS } from "./ports-teams.js";
export {
  changedUsageDays,
  type DayUsage,
  dayUsagesOf,
  type SessionUsage,
  UNCOUNTED_DAY,
  UsageCollector,
  type UsageInRange,
} from "./usage-days.js";
