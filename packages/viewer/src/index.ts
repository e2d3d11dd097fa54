/** @pisync/viewer: a session view as a page (HTML and its assets), and credential masking. */
export { APP_JS, STYLE_CSS } from "./assets.js";
export { escapeHtml, safeHref, safeImageSrc } from "./escape.js";
export { LIBRARY_CSS, LIBRARY_JS } from "./library/assets.js";
export {
  csrfField,
  LIBRARY_ASSETS,
  type LibraryChrome,
  type LibrarySection,
  renderLibraryPage,
} from "./library/layout.js";
export {
  type DeletePageInput,
  type GenerationRow,
  renderDeletePage,
  type SessionToolbarInput,
  sessionPageHost,
} from "./library/session.js";
export {
  hitHref,
  renderSessionsPage,
  renderSnippet,
  type SessionHitRow,
  type SessionRow,
  type SessionsFilter,
  type SessionsPageInput,
} from "./library/sessions.js";
export { renderSharesPage, type ShareRow, type SharesPageInput } from "./library/shares.js";
export {
  HIGHLIGHT_MAX_CHARS,
  MARKDOWN_MAX_CHARS,
  PAGE_BUDGET_CHARS,
  renderCode,
  renderMarkdown,
  SHOWN_MAX_CHARS,
  withBudget,
} from "./markdown.js";
export { type Masked, maskJsonLine, maskLine, maskLines, maskText, maskTexts } from "./mask.js";
export {
  type EntriesInput,
  type PageEntry,
  type PageInput,
  renderEntries,
  renderEntry,
  renderNotice,
  renderPage,
} from "./render.js";
export {
  renderBashExecution,
  renderToolBlock,
  TOOLS_CSS,
  type ToolCallPart,
  type ToolResultMessage,
} from "./tools/index.js";
export type { CompactTree, PathWindow, SessionFacts, SessionPageView } from "./view.js";
