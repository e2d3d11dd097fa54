/**
 * Markdown for messages, with marked: raw HTML is shown as text, links get
 * rel="noopener noreferrer nofollow" and only http(s)/mailto targets, images become links
 * (nothing is loaded from elsewhere), code is highlighted by highlight.js.
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
import { Marked, type Tokens } from "marked";
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
