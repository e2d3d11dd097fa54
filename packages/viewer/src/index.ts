/** @pisync/viewer: the share page and credential masking. */
export { APP_JS, STYLE_CSS } from "./assets.js";
export { escapeHtml, safeHref, safeImageSrc } from "./escape.js";
export { renderCode, renderMarkdown } from "./markdown.js";
export { type Masked, maskJsonLine, maskLine, maskLines, maskText, maskTexts } from "./mask.js";
export { type PageEntry, type PageInput, renderEntries, renderEntry, renderPage } from "./render.js";
