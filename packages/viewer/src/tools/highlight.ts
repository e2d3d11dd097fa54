/**
 * Highlighting text that is shown line by line (diff lines): the lines are highlighted together
 * (a comment or string spanning lines stays coloured), through the Markdown module's budgeted
 * `renderCode`, then cut back into lines, closing and reopening highlight.js's spans at each cut.
 */
import { escapeHtml } from "../escape.js";
import { renderCode } from "../markdown.js";

const OPEN = '<pre><code class="hljs">';
const CLOSE = "</code></pre>";
/** highlight.js's output: its spans, escaped text and newlines, nothing else. */
const TOKEN = /<span class="[^"<>]*">|<\/span>|\n|[^<\n]+/g;

/** Each line as safe HTML, highlighted in `lang` when the budget allows; escaped otherwise. */
export function highlightLines(lines: string[], lang: string | undefined): string[] {
  const plain = () => lines.map((l) => escapeHtml(l));
  if (!lang || lines.length === 0) return plain();
  const html = renderCode(lines.join("\n"), lang);
  // renderCode adds a note after the block when it cut the text: then the lines no longer match.
  if (!html.startsWith(OPEN) || !html.endsWith(CLOSE)) return plain();
  const out = splitLines(html.slice(OPEN.length, -CLOSE.length));
  return out.length === lines.length ? out : plain();
}

/** Cuts highlighted HTML at its newlines; every line closes the spans it opened and reopens them after. */
function splitLines(html: string): string[] {
  const out: string[] = [];
  const open: string[] = [];
  let line = "";
  for (const [token] of html.matchAll(TOKEN)) {
    if (token === "\n") {
      out.push(line + "</span>".repeat(open.length));
      line = open.join("");
    } else if (token === "</span>") {
      open.pop();
      line += token;
    } else {
      if (token.startsWith("<span")) open.push(token);
      line += token;
    }
  }
  out.push(line + "</span>".repeat(open.length));
  return out;
}
