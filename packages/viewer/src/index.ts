/** @pisync/viewer: a session view as a page (HTML and its assets), and credential masking. */
export { APP_JS, STYLE_CSS } from "./assets.js";
export { cardHead, cardText, factsLine } from "./card.js";
export { escapeHtml, safeHref, safeImageSrc } from "./escape.js";
export {
  HIGHLIGHT_MAX_CHARS,
  MARKDOWN_MAX_CHARS,
  PAGE_BUDGET_CHARS,
  plainText,
  renderCode,
  renderMarkdown,
  SHOWN_MAX_CHARS,
  withBudget,
} from "./markdown.js";
export { type Masked, maskJsonLine, maskLine, maskLines, maskText, maskTexts } from "./mask.js";
export { grouped, NO_NUMBER, shownNumber } from "./numbers.js";
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
  branchMarkdown,
  entriesMarkdown,
  entryMarkdown,
  fenced,
  inlineCode,
  type MarkdownDocument,
  type MarkdownSource,
  MD_OUTPUT_MAX_CHARS,
  markdownFoot,
  markdownHead,
  normalizeNewlines,
  QUOTED_NOTE,
} from "./session-markdown.js";
export {
  renderBashExecution,
  renderToolBlock,
  TOOLS_CSS,
  type ToolCallPart,
  type ToolResultMessage,
} from "./tools/index.js";
export type { CompactTree, LinkCard, PathWindow, SessionFacts, SessionPageView } from "./view.js";
