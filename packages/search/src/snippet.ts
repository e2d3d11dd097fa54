/**
 * Snippets cut from an entry's text in JavaScript (the index keeps no text, to stay small): a
 * window around the first match of the query's terms, every match in it marked.
 */
import type { SnippetPart } from "./port.js";
import type { Term } from "./query.js";

/** Characters of text around the first match. */
const WINDOW = 160;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
}

/** The text's words, as the index's tokenizer sees them (letters and digits). */
function wordsOf(text: string): string[] {
  return text.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A pattern matching any positive term: words whole, prefixes at a word start, phrases' words in order. */
function patternOf(terms: readonly Term[]): RegExp | undefined {
  const parts = terms
    .filter((t) => !t.exclude)
    .map((t) => {
      const words = wordsOf(t.text).map(escapeRegExp);
      if (words.length === 0) return undefined;
      const body = words.join("[^\\p{L}\\p{N}]+");
      return t.kind === "prefix"
        ? `(?<![\\p{L}\\p{N}])${body}[\\p{L}\\p{N}]*`
        : `(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`;
    })
    .filter((p): p is string => p !== undefined);
  return parts.length === 0 ? undefined : new RegExp(parts.join("|"), "giu");
}

/**
 * Removes diacritics the way the index does (remove_diacritics), keeping offsets: one char per
 * char. Only characters past ASCII can change, so only those are folded (an entry's text can be
 * tens of kilobytes, and a page cuts up to 60 snippets).
 */
function folded(text: string): string {
  return text.replace(/[\u0080-\u{10FFFF}]/gu, (c) => c.normalize("NFD").replace(/\p{M}/gu, "") || c);
}

/** The snippet of `text` for `terms`: up to {@link WINDOW} characters, matches marked. */
export function snippetOf(text: string, terms: readonly Term[]): SnippetPart[] {
  // Each run of white space as one space; a lone space is left as it is (the common case: no work).
  const flat = text.replace(/\s{2,}|[^\S ]/gu, " ");
  const pattern = patternOf(terms);
  const search = folded(flat);
  const first = pattern ? search.search(pattern) : -1;
  // Offsets of `search` equal those of `flat` only when folding kept every length; else show the start.
  const aligned = search.length === flat.length;
  const center = first >= 0 && aligned ? first : 0;
  let start = Math.max(0, center - WINDOW / 4);
  const end = Math.min(flat.length, start + WINDOW);
  start = Math.max(0, Math.min(start, end - WINDOW));
  const parts: SnippetPart[] = [];
  const push = (part: string, hit: boolean) => {
    if (part) parts.push({ text: part, hit });
  };
  const lead = start > 0 ? "…" : "";
  const tail = end < flat.length ? "…" : "";
  if (!pattern || !aligned) {
    push(`${lead}${flat.slice(start, end)}${tail}`, false);
    return flat.length ? parts : [];
  }
  let at = start;
  let pending = lead;
  for (const match of search.slice(start, end).matchAll(pattern)) {
    const from = start + (match.index ?? 0);
    const to = from + match[0].length;
    push(pending + flat.slice(at, from), false);
    pending = "";
    push(flat.slice(from, to), true);
    at = to;
  }
  push(pending + flat.slice(at, end) + tail, false);
  return parts;
}
