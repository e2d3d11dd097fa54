/**
 * Markdown for messages, with marked: raw HTML is shown as text, links get
 * rel="noopener noreferrer nofollow" and only http(s)/mailto targets, images become links
 * (nothing is loaded from elsewhere), code is highlighted by highlight.js.
 */
import hljs from "highlight.js/lib/common";
import { Marked, type Tokens } from "marked";
import { escapeHtml, safeHref } from "./escape.js";

function highlight(code: string, lang: string | undefined): string {
  const language = lang && hljs.getLanguage(lang) ? lang : undefined;
  try {
    return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
  } catch {
    return escapeHtml(code);
  }
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(token.text);
    },
    link(token: Tokens.Link) {
      const href = safeHref(token.href);
      const text = this.parser.parseInline(token.tokens);
      return href ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow">${text}</a>` : text;
    },
    image(token: Tokens.Image) {
      const href = safeHref(token.href);
      const label = escapeHtml(token.text || token.href);
      return href
        ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow">[image: ${label}]</a>`
        : `[image: ${label}]`;
    },
    code(token: Tokens.Code) {
      const lang = (token.lang ?? "").split(/\s/)[0];
      return `<pre><code class="hljs${lang ? ` language-${escapeHtml(lang)}` : ""}">${highlight(token.text, lang)}</code></pre>`;
    },
  },
});

/** Markdown to safe HTML. */
export function renderMarkdown(text: string): string {
  return marked.parse(text, { async: false }) as string;
}

/** Code (a tool's output, a command) to safe HTML, highlighted when the language is known. */
export function renderCode(code: string, lang?: string): string {
  return `<pre><code class="hljs">${highlight(code, lang)}</code></pre>`;
}
