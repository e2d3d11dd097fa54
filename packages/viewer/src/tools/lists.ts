/**
 * `grep`, `find` and `ls` as lists: the search (pattern, folder, options) in the header, then
 * one item per match, file or entry — grep's `path:line: text` split into its parts, folders
 * marked — collapsed with their count when long. pi's closing notes ("[100 matches limit
 * reached…]") become marks. The items shown are capped; the JSONL has them all.
 */
import { escapeHtml } from "../escape.js";
import { COLLAPSE_LINES, durationHtml, imagesHtml, mark, marksRow, nameHtml, output, toolBlock } from "./block.js";
import { clip, count, linesOf, num, resultImages, resultText, splitEnd, str } from "./fields.js";
import type { ToolInput } from "./types.js";

/** Items one list shows at most. */
export const LIST_MAX_ITEMS = 2000;

/** A trailing note pi adds to a list's text, in brackets on its own paragraph. */
const NOTE = /(?:^|\n\n)\[([^\n]*)\]$/;
/** A grep match (`path:12: text`), then a context line (`path-12- text`). */
const GREP_MATCH = /^(.+?)(:)(\d+): ?(.*)$/s;
const GREP_CONTEXT = /^(.+?)(-)(\d+)- ?(.*)$/s;

/** What each tool lists, for the count in the summary. */
const NOUN: Record<string, [string, string]> = {
  grep: ["line", "lines"],
  find: ["file", "files"],
  ls: ["entry", "entries"],
};

/** One item of the list as HTML. */
function itemHtml(tool: string, line: string): string {
  if (tool === "grep") {
    const m = GREP_MATCH.exec(line) ?? GREP_CONTEXT.exec(line);
    if (m) {
      const [, path, sep, n, text] = m;
      return `<li class="${sep === ":" ? "match" : "context"}"><code class="tool-path">${escapeHtml(clip(path))}</code><span class="ln">${escapeHtml(
        clip(n),
      )}</span><code class="text">${escapeHtml(clip(text, 500))}</code></li>`;
    }
  }
  const dir = line.endsWith("/");
  return `<li${dir ? ' class="dir"' : ""}><code class="tool-path">${escapeHtml(clip(line, 500))}</code></li>`;
}

/** The header's search: pattern, folder and the options that change the answer. */
function searchHtml(tool: string, args: Record<string, unknown>): string {
  const pattern = str(args.pattern);
  const path = str(args.path);
  const bits: string[] = [];
  if (pattern !== undefined) bits.push(`<code class="pattern">${escapeHtml(clip(pattern))}</code>`);
  else if (tool !== "ls") bits.push(mark("missing", "(no pattern)"));
  if (path !== undefined || tool === "ls") {
    bits.push(
      `${tool === "ls" ? "" : '<span class="muted">in</span> '}<code class="tool-path">${escapeHtml(clip(path ?? "."))}</code>`,
    );
  }
  const options: string[] = [];
  if (str(args.glob) !== undefined) options.push(`glob ${str(args.glob)}`);
  if (args.ignoreCase === true) options.push("ignore case");
  if (args.literal === true) options.push("literal");
  if (num(args.context) !== undefined) options.push(`context ${num(args.context)}`);
  if (num(args.limit) !== undefined) options.push(`limit ${num(args.limit)}`);
  if (options.length) bits.push(`<span class="tool-meta">${escapeHtml(clip(options.join(" · ")))}</span>`);
  return bits.join(" ");
}

/** Renders a `grep`, `find` or `ls` call and its result. */
export function renderList(input: ToolInput): string {
  const { name, args, result } = input;
  const head = `${nameHtml(name)} ${searchHtml(name, args)}${durationHtml(num(result?.durationMs))}`;
  const error = result?.isError === true;
  const parts: string[] = [];
  if (result) {
    let text = resultText(result);
    if (error) parts.push(output(text, { kind: "error-text" }));
    else {
      const notes: string[] = [];
      // pi closes with one note paragraph; a few more are read, not a hostile number of them.
      for (let end = splitEnd(text, NOTE); end.match && notes.length < 4; end = splitEnd(text, NOTE)) {
        notes.unshift(mark("info", end.match[1]));
        text = end.rest;
      }
      parts.push(listHtml(name, linesOf(text)), imagesHtml(resultImages(result)), marksRow(notes));
    }
  }
  return toolBlock(input, head, parts, error, "list");
}

/** The items as a list (class `output`), collapsed with their count when long. */
function listHtml(tool: string, lines: string[]): string {
  const [one, many] = NOUN[tool] ?? ["line", "lines"];
  if (lines.length === 0 || (lines.length === 1 && /^No (files|matches)|^\(empty directory\)/.test(lines[0]))) {
    return `<div class="output"><p class="muted none">${escapeHtml(lines[0] ?? "(nothing found)")}</p></div>`;
  }
  const shown = lines.slice(0, LIST_MAX_ITEMS).map((l) => itemHtml(tool, l));
  const cut = lines.length - shown.length;
  const more =
    cut > 0 ? `<li class="more">${escapeHtml(`… ${count(cut, "more")} not shown (see the JSONL)`)}</li>` : "";
  const list = `<ul class="items">${shown.join("")}${more}</ul>`;
  if (lines.length <= COLLAPSE_LINES) return `<div class="output">${list}</div>`;
  return `<div class="output long"><details><summary>${escapeHtml(count(lines.length, one, many))}</summary>${list}</details></div>`;
}
