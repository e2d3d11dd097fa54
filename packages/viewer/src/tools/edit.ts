/**
 * `edit`: the file's path and the change as a unified diff with old and new line numbers, its
 * lines highlighted in the file's language. The diff pi stored in the result comes first; a
 * failed or missing result shows the change the call asked for, marked as not applied.
 */
import { escapeHtml } from "../escape.js";
import { durationHtml, mark, marksRow, nameHtml, output, pathHtml, toolBlock } from "./block.js";
import { type DiffLine, diffReplacements, parseDiff, replacementsOf } from "./diff.js";
import { count, num, obj, resultText, str } from "./fields.js";
import { highlightLines } from "./highlight.js";
import { languageOf } from "./language.js";
import type { ToolInput } from "./types.js";

/** Diffs longer than this many lines collapse behind their summary. */
export const DIFF_COLLAPSE_LINES = 60;

const SIGN: Record<DiffLine["kind"], string> = { add: "+", del: "-", ctx: " ", hunk: "", skip: "", meta: "" };

/** Diff lines as HTML: one block-level line each, numbers and sign outside the selectable code. */
export function diffHtml(lines: DiffLine[], lang: string | undefined): string {
  const code = lines.filter((l) => l.kind === "add" || l.kind === "del" || l.kind === "ctx");
  const highlighted = highlightLines(
    code.map((l) => l.text),
    lang,
  );
  let next = 0;
  const rows = lines.map((l) => {
    if (l.kind === "hunk" || l.kind === "skip" || l.kind === "meta") {
      return `<span class="dl ${l.kind}">${escapeHtml(l.kind === "skip" ? "⋯" : l.text)}</span>`;
    }
    const ln = (n: number | undefined) => `<span class="ln">${n === undefined ? "" : n}</span>`;
    return `<span class="dl ${l.kind}">${ln(l.kind === "add" ? undefined : l.oldNo)}${ln(
      l.kind === "del" ? undefined : l.newNo,
    )}<span class="sg">${SIGN[l.kind]}</span>${highlighted[next++] ?? ""}</span>`;
  });
  return `<pre class="diff"><code class="hljs">${rows.join("")}</code></pre>`;
}

/** The diff as the output part, collapsed when long; its size in lines added and removed. */
function diffOutput(lines: DiffLine[], lang: string | undefined, note: string): string {
  const added = lines.filter((l) => l.kind === "add").length;
  const removed = lines.filter((l) => l.kind === "del").length;
  const stat = `<span class="stat"><span class="plus">+${added}</span> <span class="minus">−${removed}</span></span>`;
  const body = diffHtml(lines, lang);
  if (lines.length <= DIFF_COLLAPSE_LINES) return `<div class="output diff-out">${note}${stat}${body}</div>`;
  return `<div class="output diff-out long">${note}<details><summary>${stat} ${escapeHtml(
    `diff: ${count(lines.length, "line")}`,
  )}</summary>${body}</details></div>`;
}

/** Renders an `edit` call and its result. */
export function renderEdit(input: ToolInput): string {
  const { name, args, result } = input;
  const path = str(args.path) ?? str(args.file_path);
  const lang = languageOf(path);
  const details = obj(result?.details);
  const error = result?.isError === true;
  const first = num(details.firstChangedLine);
  const head = `${nameHtml(name)} ${pathHtml(path)}${first !== undefined ? `<span class="tool-meta">:${first}</span>` : ""}${durationHtml(num(result?.durationMs))}`;

  const parts: string[] = [];
  // 1.x stores a unified `patch` beside pi's display `diff`; an empty (or changeless) patch
  // must not hide the diff: the first that holds a change is shown.
  const candidates = error ? [] : [str(details.patch), str(details.diff)].filter((t) => t?.trim());
  const changes = (lines: DiffLine[] | undefined) => lines?.some((l) => l.kind === "add" || l.kind === "del");
  const stored = candidates.find((t) => changes(parseDiff(t as string))) ?? candidates[0];
  const parsed = stored === undefined ? undefined : parseDiff(stored);
  if (stored !== undefined && !parsed) {
    parts.push(output(stored, { noun: "diff" })); // too large to parse: shown as text
  } else {
    const lines = parsed ?? diffReplacements(replacementsOf(args));
    const asked = !parsed && (error || !result);
    const note = asked
      ? marksRow([mark("warn", error ? "not applied" : "asked for", "the change the call asked for")])
      : "";
    if (lines.length > 0) parts.push(diffOutput(lines, lang, note));
  }
  const text = resultText(result);
  // The success sentence repeats what the diff shows; anything else (an error) is shown.
  if (result && (error || !/^Successfully (replaced|edited)/.test(text)) && text) {
    parts.push(output(text, { kind: error ? "error-text" : "" }));
  }
  return toolBlock(input, head, parts, error);
}
