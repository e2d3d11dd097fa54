/** @pisync/viewer: a session view as a page (HTML and its assets), and credential masking. */
export { APP_JS, STYLE_CSS } from "./assets.js";
export { escapeHtml, safeHref, safeImageSrc } from "./escape.js";
export { type DeviceRow, type DevicesPage, renderDevicesPage } from "./library/devices.js";
export {
  csrfField,
  LIBRARY_ASSETS,
  type LibraryChrome,
  type LibrarySection,
  renderLibraryPage,
} from "./library/layout.js";
export { type RefusedLink, renderLinkRefused, renderSignedIn, renderSignInHint } from "./library/signin.js";
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
