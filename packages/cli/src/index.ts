/** @pisync/cli as a library: the sync engine and the pull, for `npm start` and the pi package. */
export { Api, ApiError, type ApiOptions, Transient } from "./api.js";
export { CliError, EXIT } from "./cli-error.js";
export type { Io } from "./commands/common.js";
export { type LibraryLink, libraryLink, openUrl } from "./commands/open.js";
export { type PullArgs, type Pulled, parsePullArgs, pullSession } from "./commands/remote.js";
export { expiryLimitMessage } from "./commands/share.js";
export { loadLogin, mergeEnabled, requestTimeoutMs, resolveLogin } from "./config.js";
export { headerOf, parseDuration } from "./header.js";
export {
  type Confirmed,
  confirmedState,
  type Identity,
  lastKnownState,
  whoami,
} from "./identity.js";
export { createLogger, type Logger } from "./log.js";
export { defaultRoots, piFileName, piFolderName, piSessionsRoot } from "./paths.js";
export { type BusyWait, describeWait } from "./retry.js";
export { safeJson, sanitize } from "./sanitize.js";
export { type FileState, StateStore } from "./state.js";
export { completeLengthOf, type SyncContext, type SyncResult, syncFile, Unauthorized } from "./sync.js";
export { describeSyncStatus, type SessionSyncStatus, sessionSyncStatus } from "./sync-status.js";
export { sessionFiles, Watcher } from "./watch.js";
