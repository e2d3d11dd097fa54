/**
 * The HTML every tool block is made of: the outer element, the header, status marks, outputs
 * that collapse behind a <details> when long (with their size shown), result images. No
 * JavaScript: the page's script only toggles a class on <body> that shows or hides `.output`.
 */
import { blobImageSrc } from "../blob-images.js";
import { escapeHtml, safeImageSrc } from "../escape.js";
import { renderCode } from "../markdown.js";
import { clip, count, linesOf, sizeOf, toolAttr } from "./fields.js";
import type { ToolInput } from "./types.js";

/** Outputs longer than this many lines collapse. */
export const COLLAPSE_LINES = 20;
/** Outputs longer than this many characters collapse (one long line counts too). */
export const COLLAPSE_CHARS = 4000;
/** Lines a collapsed output shows before it is opened. */
export const PREVIEW_LINES = 6;

/**
 * One tool block: `<div class="tool" data-tool="NAME">` (class `failed` too on an error), its header and its parts; an error is
 * marked in the header, a missing call or result is said.
 */
export function toolBlock(
  input: Pick<ToolInput, "name" | "result" | "hasCall">,
  head: string,
  parts: string[],
  error: boolean,
  extraClass = "",
): string {
  const classes = ["tool", error ? "failed" : "", extraClass].filter(Boolean).join(" ");
  const marks = [
    error ? mark("err", "error", "the tool reported an error") : "",
    input.hasCall ? "" : MISSING_CALL,
    input.result ? "" : MISSING_RESULT,
  ].filter(Boolean);
  return `<div class="${classes}" data-tool="${toolAttr(input.name)}"><div class="tool-head">${head}${
    marks.length ? ` ${marks.join(" ")}` : ""
  }</div>${parts.filter(Boolean).join("")}</div>`;
}

/** The tool's name as the header shows it. */
export const nameHtml = (name: string) => `<span class="tool-name">${escapeHtml(clip(name))}</span>`;

/** A file or folder path in a header. */
export const pathHtml = (path: string | undefined, fallback = "(no path)") =>
  path === undefined
    ? `<span class="mark missing">${fallback}</span>`
    : `<code class="tool-path">${escapeHtml(clip(path))}</code>`;

/** A small status mark: kinds are styled (`err`, `ok`, `warn`, `missing`, `info`). */
export const mark = (kind: "err" | "ok" | "warn" | "missing" | "info", text: string, title = "") =>
  `<span class="mark ${kind}"${title ? ` title="${escapeHtml(clip(title))}"` : ""}>${escapeHtml(clip(text))}</span>`;

/** Marks in a row under the output (empty when there are none). */
export const marksRow = (marks: string[]) => (marks.length ? `<div class="marks">${marks.join(" ")}</div>` : "");

/** Options of {@link output}. */
export interface OutputOptions {
  /** The highlight.js language (undefined: plain). */
  lang?: string;
  /** What a collapsed output previews: its first lines (files, lists) or its last (terminals). */
  preview?: "head" | "tail";
  /** Extra class on the output (`terminal`, `file`). */
  kind?: string;
  /** What the summary calls the whole ("output", "file"). */
  noun?: string;
}

/**
 * A text as the output part of a block (class `output`): short texts shown whole, long ones
 * previewed and collapsed behind a <details> whose summary gives their size. Highlighting goes
 * through the Markdown module's page budget.
 */
export function output(text: string, options: OutputOptions = {}): string {
  const { lang, preview = "head", kind = "", noun = "output" } = options;
  const lines = linesOf(text);
  const cls = `output${kind ? ` ${kind}` : ""}`;
  if (lines.length <= COLLAPSE_LINES && text.length <= COLLAPSE_CHARS) {
    return `<div class="${cls}">${renderCode(text.replace(/\n$/, ""), lang)}</div>`;
  }
  return `<div class="${cls} long">${previewHtml(lines, preview, lang)}<details><summary>${escapeHtml(
    `${noun}: ${count(lines.length, "line")} · ${sizeOf(text)}`,
  )}</summary>${renderCode(text.replace(/\n$/, ""), lang)}</details></div>`;
}

/** The first or last lines of a long text (each cut at 400 characters), shown until it is opened. */
function previewHtml(lines: string[], from: "head" | "tail", lang: string | undefined): string {
  const shown = (from === "head" ? lines.slice(0, PREVIEW_LINES) : lines.slice(-PREVIEW_LINES)).map((l) =>
    l.length > 400 ? `${l.slice(0, 400)}…` : l,
  );
  const more = lines.length - shown.length;
  const note = more > 0 ? `<div class="more">${escapeHtml(`… ${count(more, "more line")}`)}</div>` : "";
  const code = renderCode(shown.join("\n"), lang);
  return `<div class="preview">${from === "head" ? code + note : note + code}</div>`;
}

/** A result's images (raster data: URLs only; anything else is named, not loaded). */
export function imagesHtml(images: { mimeType: unknown; data: unknown }[]): string {
  if (images.length === 0) return "";
  const shown = images.map((image) => {
    const src = safeImageSrc(image.mimeType, image.data) ?? blobImageSrc(image.mimeType, image.data);
    return src
      ? `<img class="tool-image" src="${escapeHtml(src)}" alt="an image in the tool's result">`
      : mark(
          "missing",
          `[image not shown: ${typeof image.mimeType === "string" ? image.mimeType.slice(0, 80) : "unknown type"}]`,
        );
  });
  return `<div class="output images">${shown.join("")}</div>`;
}

/** What a block says when one half is missing. */
export const MISSING_RESULT = mark(
  "missing",
  "no result",
  "the result is not on this path (it never came, or is elsewhere)",
);
export const MISSING_CALL = mark(
  "missing",
  "call not shown",
  "the call that asked for this result is not on this path",
);

/** A duration from pi 1.x's `durationMs`: "35 ms", "1.2 s". */
export function durationHtml(ms: number | undefined): string {
  if (ms === undefined || ms < 0) return "";
  const text = ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
  return ` <span class="tool-meta">${escapeHtml(text)}</span>`;
}
