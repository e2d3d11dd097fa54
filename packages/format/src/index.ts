/**
 * @pisync/format: pi's session files (JSONL), read exactly as pi reads them.
 *
 * @example
 * import { parseSession, buildSessionContext } from "@pisync/format";
 * const session = parseSession(bytes);
 * const { messages, model, thinkingLevel } = buildSessionContext(session);
 */
export {
  applyEdit,
  type BuildContextOptions,
  buildSessionContext,
  contextSettings,
  messagesOfEntry,
  recordsForContext,
  type SessionContext,
} from "./context.js";
export { deeperThan, stringifyJson } from "./deep-json.js";
export { findHeader, type HeaderSearch, headerVersion, IMPORTED_LINES_FIELD, importedLinesOf } from "./header.js";
export { indexSession } from "./index-scan.js";
export {
  completeLength,
  decodeUtf8,
  encodeUtf8,
  forEachLine,
  type LineSpan,
  type LineTable,
  lineTable,
  splitLines,
} from "./jsonl.js";
export { type ByteSource, LightIndex } from "./light-index.js";
export {
  isHeader,
  isObject,
  type Json,
  type LineRead,
  type LineRecord,
  lineProblem,
  parseRecordLine,
  readLine,
  recordOf,
  recordProblem,
  trimFileStartBom,
} from "./lines.js";
export { CURRENT_SESSION_VERSION, migrateEntry, v1EntryId } from "./migrate.js";
export {
  entryProblems,
  hasEntry,
  labelsOf,
  nameOf,
  type ParsedSession,
  parseSession,
  treeProblems,
} from "./parse.js";
export type { Problem, ProblemKind } from "./problems.js";
export * from "./schema.js";
export { type EntryFacts, type EntryRecord, type IndexParts, SessionIndex } from "./session-index.js";
export { type TitleSlot, titleSlotLength, titleSlotOf, titleSlotOfValue } from "./title-slot.js";
export {
  addUsage,
  emptyTotals,
  pathTotals,
  type Totals,
  USAGE_COST_MAX,
  USAGE_TOKENS_MAX,
  usageKeyOf,
  usageNumber,
  usageOfEntry,
} from "./totals.js";
export { findCycles, pathTo, type TreePath } from "./tree.js";
