/**
 * Finding credentials in one decoded text: secretlint's recommended rules and pisync's own
 * ({@link RULES}), over windows of bounded size, findings merged where they overlap.
 */
import { sameAccountIds } from "./account-ids.js";
import type { Finding } from "./finding.js";
import { Keywords } from "./keywords.js";
import { RULES, ruleFindings } from "./rules.js";
import { SECRETLINT_KEYWORDS, secretlintFindings } from "./secretlint.js";

/**
 * Texts longer than this are scanned in windows of this size: no rule then runs over more
 * than a window, so even a rule that backtracks costs at most a bounded amount per window,
 * and the work for a text grows linearly with its length.
 */
export const WINDOW = 128 * 1024;
/** Windows overlap by more than the longest credential a rule matches (a private key). */
export const OVERLAP = 20 * 1024;

/** The `[start, end)` windows a text of `length` characters is scanned in. */
export function windowsOf(length: number): [number, number][] {
  if (length <= WINDOW) return [[0, length]];
  const windows: [number, number][] = [];
  for (let start = 0; ; start += WINDOW - OVERLAP) {
    const end = Math.min(start + WINDOW, length);
    windows.push([start, end]);
    if (end === length) return windows;
  }
}

/** Overlapping or touching findings become one (named by the first); sorted by start. */
export function mergeFindings(found: Finding[]): Finding[] {
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Finding[] = [];
  for (const f of found) {
    const last = merged[merged.length - 1];
    if (last && f.start <= last.end) last.end = Math.max(last.end, f.end);
    else merged.push({ ...f });
  }
  return merged;
}

/**
 * Escapes (`\n`, `\\t`, `\u0041`…) and percent-encoded bytes, each turned into as many
 * spaces: text a tool printed escaped (a JSON file, a string literal, a URL) then reads as
 * its rules expect, a token after `\n` starting a word, at the same offsets.
 */
const ESCAPE = /(?<!\\)\\+(?:u[0-9A-Fa-f]{4}|[nrtbf0"'/])|%[0-9A-Fa-f]{2}/g;
const blankEscapes = (text: string) => text.replace(ESCAPE, (m) => " ".repeat(m.length));

/** The keywords of secretlint's scanners and of pisync's rules, found in one pass. */
let keywords: Keywords | undefined;
const keywordIndex = () => {
  keywords ??= new Keywords([...SECRETLINT_KEYWORDS, ...RULES.map((r) => r.keywords)]);
  return keywords;
};

/** What both rule sets find in a text. */
function scanText(text: string): Finding[] {
  const present = keywordIndex().present(text);
  const split = SECRETLINT_KEYWORDS.length;
  return [...secretlintFindings(text, present.slice(0, split)), ...ruleFindings(text, RULES, present.slice(split))];
}

/** What the rules find in one window, as it is and with its escapes blanked. */
function scanWindow(window: string): Finding[] {
  const found = scanText(window);
  if (!window.includes("\\") && !window.includes("%")) return found;
  const blanked = blankEscapes(window);
  if (blanked === window) return found;
  return [...found, ...scanText(blanked)];
}

/** The credentials in `text`, merged, in order. */
export function findCredentials(text: string): Finding[] {
  if (text.length < 8) return []; // shorter than any credential a rule knows
  const found: Finding[] = [];
  for (const [start, end] of windowsOf(text.length)) {
    const window = start === 0 && end === text.length ? text : text.slice(start, end);
    for (const f of scanWindow(window)) found.push({ start: f.start + start, end: f.end + start, rule: f.rule });
  }
  return mergeFindings([...found, ...sameAccountIds(text, found)]);
}

/** `text` with each finding replaced by `[masked: <rule>]`. */
export function applyFindings(text: string, found: readonly Finding[]): string {
  let out = "";
  let at = 0;
  for (const f of found) {
    out += `${text.slice(at, f.start)}[masked: ${f.rule}]`;
    at = f.end;
  }
  return out + text.slice(at);
}
