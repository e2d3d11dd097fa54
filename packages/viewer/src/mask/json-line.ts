/**
 * Masking one line of session JSON on what a reader sees: every string literal of the line
 * (values and keys, at any depth) is decoded, credentials are found in the decoded text, and
 * only the literals that hold one are re-encoded with each finding replaced in place. All
 * other bytes stay as they were, so a valid line stays valid JSON with the same structure,
 * and a line that is not valid JSON (the backup keeps broken lines verbatim) is masked the
 * same way, its text outside string literals scanned as it is.
 */
import type { Finding } from "./finding.js";
import { applyFindings, findCredentials } from "./scan.js";

/** One masked text and how many credentials were masked in it. */
export interface Masked {
  text: string;
  count: number;
}

/** Text between literals that is only JSON syntax (punctuation, numbers, true/false/null): nothing to read. */
const JSON_SYNTAX = /^[\s,:{}[\]0-9.eE+\-truefalsn]*$/;

/** Keys whose values tie entries together: kept as they are so the tree stays whole. */
const STRUCTURAL_KEYS = new Set(["id", "parentId", "targetId", "firstKeptEntryId", "toolCallId"]);

/** Between segments scanned together: no rule's pattern crosses a NUL between newlines. */
const SEPARATOR = "\n\u0000\n";

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" };

/** The text of a literal's body, decoded leniently (a torn or malformed one too). */
function decodeBody(body: string, closed: boolean): string {
  if (!body.includes("\\")) return body;
  if (closed) {
    try {
      return JSON.parse(`"${body}"`) as string;
    } catch {
      // malformed escapes or raw control characters: decoded leniently below
    }
  }
  return body.replace(/\\(u[0-9a-fA-F]{4}|[\s\S])/g, (_, e: string) =>
    e.length === 5 ? String.fromCharCode(Number.parseInt(e.slice(1), 16)) : (ESCAPES[e] ?? e),
  );
}

interface Segment {
  /** Where the segment's source text is in the line. */
  start: number;
  end: number;
  /** The text scanned: a literal's decoded text, or raw text between literals. */
  text: string;
  /** A literal (re-encoded when masked), or raw text (masked as it is). */
  literal: boolean;
  closed: boolean;
}

/**
 * Where the string literal opened at `open` ends (after its closing quote), and whether it is
 * closed: a torn line ends inside one. Quotes are found with `indexOf`; one is escaped when an
 * odd run of backslashes precedes it. Linear: each character is looked at a bounded number of times.
 */
function literalEnd(line: string, open: number): { end: number; closed: boolean } {
  let at = open + 1;
  for (;;) {
    const quote = line.indexOf('"', at);
    if (quote < 0) return { end: line.length, closed: false };
    let backslashes = 0;
    while (line.charCodeAt(quote - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return { end: quote + 1, closed: true };
    at = quote + 1;
  }
}

/** Gap text worth scanning: long enough to hold a credential and not only JSON syntax. */
const worthScanning = (gap: string) => gap.length >= 8 && !JSON_SYNTAX.test(gap);

/** The segments of a line worth scanning, in order. */
function segmentsOf(line: string): Segment[] {
  const segments: Segment[] = [];
  let at = 0;
  let previous: string | undefined;
  for (let open = line.indexOf('"'); open >= 0; open = line.indexOf('"', at)) {
    const { end, closed } = literalEnd(line, open);
    const gap = line.slice(at, open);
    if (worthScanning(gap)) segments.push({ start: at, end: open, text: gap, literal: false, closed: true });
    // A torn literal may end in half an escape: that lone backslash is left out.
    let bodyEnd = closed ? end - 1 : end;
    if (!closed) {
      let backslashes = 0;
      while (line.charCodeAt(bodyEnd - 1 - backslashes) === 92) backslashes++;
      if (backslashes % 2 === 1) bodyEnd--;
    }
    const text = decodeBody(line.slice(open + 1, bodyEnd), closed);
    // The value of an id-like key (`"id": "…"`) is left alone.
    const structural = previous !== undefined && STRUCTURAL_KEYS.has(previous) && /^\s*:\s*$/.test(gap);
    if (!structural) segments.push({ start: open, end, text, literal: true, closed });
    previous = text;
    at = end;
  }
  const tail = line.slice(at);
  if (worthScanning(tail)) segments.push({ start: at, end: line.length, text: tail, literal: false, closed: true });
  return segments;
}

/** Findings in the joined text, cut at segment bounds and assigned to their segments. */
function perSegment(segments: Segment[], found: Finding[]): Finding[][] {
  const out: Finding[][] = segments.map(() => []);
  let offset = 0;
  let i = 0;
  const starts = segments.map((s) => {
    const at = offset;
    offset += s.text.length + SEPARATOR.length;
    return at;
  });
  for (const f of found) {
    while (i + 1 < segments.length && starts[i] + segments[i].text.length <= f.start) i++;
    for (let j = i; j < segments.length && starts[j] < f.end; j++) {
      const start = Math.max(f.start, starts[j]) - starts[j];
      const end = Math.min(f.end, starts[j] + segments[j].text.length) - starts[j];
      if (end > start) out[j].push({ start, end, rule: f.rule });
    }
  }
  return out;
}

/** Masks the credentials in one line of session JSON (or of what should have been JSON). */
export function maskJsonLine(line: string): Masked {
  const segments = segmentsOf(line);
  if (segments.length === 0) return { text: line, count: 0 };
  const found = findCredentials(segments.map((s) => s.text).join(SEPARATOR));
  if (found.length === 0) return { text: line, count: 0 };
  const bySegment = perSegment(segments, found);
  let text = "";
  let at = 0;
  segments.forEach((segment, i) => {
    if (bySegment[i].length === 0) return;
    const masked = applyFindings(segment.text, bySegment[i]);
    const encoded = segment.literal ? JSON.stringify(masked) : masked;
    text += line.slice(at, segment.start) + (segment.literal && !segment.closed ? encoded.slice(0, -1) : encoded);
    at = segment.end;
  });
  return { text: text + line.slice(at), count: found.length };
}

/** Masks the credentials in one plain text (a title, a folder, a label). */
export function maskText(text: string): Masked {
  const found = findCredentials(text);
  return found.length === 0 ? { text, count: 0 } : { text: applyFindings(text, found), count: found.length };
}
