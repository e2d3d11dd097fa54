/**
 * `@pisync/viewer/library`: the signed-in library's pages. A subpath of its own because these
 * pages need only escaping, not the session viewer's Markdown, highlighting and masking: the
 * Lambda bundle keeps those in a chunk that loads with the first page that shows a session.
 */
export { LIBRARY_CSS, LIBRARY_JS } from "./assets.js";
export { type DeviceCodeRow, type DevicePageInput, renderDevicePage } from "./device.js";
export { type DeviceRow, type DevicesPage, type MintedToken, renderDevicesPage } from "./devices.js";
export {
  duration,
  type InsightsGroup,
  type InsightsPageInput,
  type InsightsPageReport,
  type InsightsSums,
  type InsightsTool,
  type InsightsTopSession,
  insightsCsv,
  renderInsightsPage,
  renderInsightsRefused,
  shortTokens,
} from "./insights.js";
export { csrfField, LIBRARY_ASSETS, type LibraryChrome, type LibrarySection, renderLibraryPage } from "./layout.js";
export {
  type DeletePageInput,
  type GenerationRow,
  renderDeletePage,
  type SessionToolbarInput,
  sessionPageHost,
} from "./session.js";
export {
  hitHref,
  renderSessionsPage,
  renderSnippet,
  type SessionHitRow,
  type SessionRow,
  type SessionsFilter,
  type SessionsPageInput,
} from "./sessions.js";
export { renderSharesPage, type ShareRow, type SharesPageInput } from "./shares.js";
export { type RefusedLink, renderConfirmSignIn, renderLinkRefused, renderSignInHint } from "./signin.js";
export {
  renderAuditPage,
  renderJoinPage,
  renderTeamPage,
  renderTeamsPage,
  type TeamHitRow,
  type TeamPageInput,
  type TeamRow,
  type TeamSessionRow,
} from "./teams.js";
