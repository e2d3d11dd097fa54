/**
 * Markdown for messages, with markdown-it (linear-time parsing, nesting capped at 100 levels):
 * raw HTML is shown as text, links get rel="noopener noreferrer nofollow" and only
 * http(s)/mailto targets, images become links (nothing is loaded from elsewhere), code is
 * highlighted by highlight.js. Session text is hostile, so the work one text can cause is
 * bounded: past {@link MARKDOWN_MAX_CHARS} it is shown as escaped preformatted text, code past
 * {@link HIGHLIGHT_MAX_CHARS} is not highlighted, and nothing past {@link SHOWN_MAX_CHARS} is shown
 * (the JSONL download has it all).
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt from "markdown-it";
import { escapeHtml, safeHref } from "./escape.js";

// The languages coding sessions show most; highlight.js's full set would weigh three times as much.
for (const [name, language] of Object.entries({
  bash,
  c,
  cpp,
  css,
  diff,
  dockerfile,
  go,
  java,
  javascript,
  json,
  markdown,
  python,
  ruby,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, language);
}

/** Texts longer than this are shown as escaped preformatted text, not parsed as Markdown. */
export const MARKDOWN_MAX_CHARS = 64 * 1024;
/** Code longer than this is escaped without highlighting. */
export const HIGHLIGHT_MAX_CHARS = 64 * 1024;
/** The most of one text a page shows; the rest is named, and is in the JSONL download. */
export const SHOWN_MAX_CHARS = 256 * 1024;
/**
 * Characters of Markdown one rendering (a page, a batch of entries) parses, and of code it
 * highlights, in all: past them the rest is shown as escaped text, so a page of 150 hostile
 * entries costs no more than one large one.
 */
export const PAGE_BUDGET_CHARS = 256 * 1024;

/** What the rendering under way may still parse or highlight (rendering is synchronous: one at a time). */
let budget = Number.POSITIVE_INFINITY;

/** Runs `render` with at most `chars` of Markdown parsed and code highlighted in all. */
export function withBudget<T>(chars: number, render: () => T): T {
  const saved = budget;
  budget = chars;
  try {
    return render();
  } finally {
    budget = saved;
  }
}

/** Takes `chars` from the budget; false when they do not fit (the text is then shown plain). */
function spend(chars: number): boolean {
  if (chars > budget) return false;
  budget -= chars;
  return true;
}

/** At most {@link SHOWN_MAX_CHARS} of a text, and a note of what was left out. */
function shown(text: string): { text: string; note: string } {
  if (text.length <= SHOWN_MAX_CHARS) return { text, note: "" };
  const more = text.length - SHOWN_MAX_CHARS;
  return {
    text: text.slice(0, SHOWN_MAX_CHARS),
    note: `<p class="muted cut">… ${more.toLocaleString("en-US")} more characters not shown (see the JSONL)</p>`,
  };
}

function highlight(code: string, lang: string | undefined): string {
  const language =
    lang && code.length <= HIGHLIGHT_MAX_CHARS && hljs.getLanguage(lang) && spend(code.length) ? lang : undefined;
  try {
    return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
  } catch {
    return escapeHtml(code);
  }
}

const md = new MarkdownIt("default", { html: false, linkify: true, typographer: false, maxNesting: 100 });
// Every link target passes safeHref at render time; markdown-it's own check is looser.
md.validateLink = () => true;

const codeBlock = (code: string, lang: string) =>
  `<pre><code class="hljs${lang ? ` language-${escapeHtml(lang)}` : ""}">${highlight(code, lang)}</code></pre>\n`;

md.renderer.rules.fence = (tokens, i) => codeBlock(tokens[i].content, (tokens[i].info ?? "").trim().split(/\s/)[0]);
md.renderer.rules.code_block = (tokens, i) => codeBlock(tokens[i].content, "");
md.renderer.rules.image = (tokens, i) => {
  const token = tokens[i];
  const href = safeHref(token.attrGet("src"));
  const label = escapeHtml(token.content || token.attrGet("src"));
  return href
    ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow">[image: ${label}]</a>`
    : `[image: ${label}]`;
};
// One pass after parsing marks unsafe links (a stack pairs each link's open and close tokens).
md.core.ruler.push("safe_links", (state) => {
  for (const block of state.tokens) {
    const open: boolean[] = [];
    for (const token of block.children ?? []) {
      if (token.type === "link_open") {
        const safe = safeHref(token.attrGet("href")) !== undefined;
        token.meta = { ...token.meta, dropped: !safe };
        open.push(safe);
      } else if (token.type === "link_close") {
        token.meta = { ...token.meta, dropped: !(open.pop() ?? false) };
      }
    }
  }
});
md.renderer.rules.link_open = (tokens, i) => {
  // An unsafe link keeps its text only.
  const href = tokens[i].meta?.dropped ? undefined : safeHref(tokens[i].attrGet("href"));
  return href ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow">` : "";
};
md.renderer.rules.link_close = (tokens, i) => (tokens[i].meta?.dropped ? "" : "</a>");

/** Quote and list markers one line may open before the text is shown preformatted (markdown-it stops at 100). */
const MAX_DEPTH = 64;

/** Whether a line opens more quotes or lists than a page nests (one pass over line starts). */
function tooDeep(text: string): boolean {
  let depth = 0;
  let atStart = true;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 10) {
      depth = 0;
      atStart = true;
    } else if (atStart && ch === 62) {
      if (++depth > MAX_DEPTH) return true; // >
    } else if (atStart && (ch === 45 || ch === 42 || ch === 43) && /[ \t]/.test(text[i + 1] ?? "")) {
      if (++depth > MAX_DEPTH) return true; // a list marker: - * + and a space (a long --- rule is not one)
    } else if (!(atStart && (ch === 32 || ch === 9))) {
      atStart = false;
    }
  }
  return false;
}

/** Markdown to safe HTML; a text too long or too deeply nested for Markdown is shown preformatted. */
export function renderMarkdown(text: string): string {
  const { text: visible, note } = shown(text);
  if (visible.length > MARKDOWN_MAX_CHARS || tooDeep(visible) || !spend(visible.length)) {
    return `<pre class="plain">${escapeHtml(visible)}</pre>${note}`;
  }
  return md.render(visible) + note;
}

/** Code (a tool's output, a command) to safe HTML, highlighted when the language is known and it is short. */
export function renderCode(code: string, lang?: string): string {
  const { text: visible, note } = shown(code);
  return `<pre><code class="hljs">${highlight(visible, lang)}</code></pre>${note}`;
}

/** Titles longer than this are cut before they are parsed (a title shows one line). */
const PLAIN_MAX_CHARS = 4096;

/**
 * The text a line of Markdown reads as, marks left out: `` `code` ``, `**bold**` and links
 * become their words (a title, a preview card). Raw HTML stays text. Bounded: past
 * {@link PLAIN_MAX_CHARS} the rest is not read.
 */
export function plainText(markdown: string): string {
  const line = markdown.length > PLAIN_MAX_CHARS ? markdown.slice(0, PLAIN_MAX_CHARS) : markdown;
  let out = "";
  for (const token of md.parseInline(line, {})[0]?.children ?? []) {
    if (token.type === "text" || token.type === "code_inline") out += token.content;
    else if (token.type === "softbreak" || token.type === "hardbreak") out += " ";
    else if (token.type === "image") out += token.content;
  }
  return out;
}
