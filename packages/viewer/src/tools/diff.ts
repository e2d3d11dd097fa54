/**
 * An edit as diff lines, from whichever the session holds: pi 1.x's unified `details.patch`,
 * pi's display diff `details.diff` (0.73.1 and 1.x: "+12 text", "-7 text", " 8 text", "   ..."),
 * or, when the result carries neither (an error, a missing result, another tool), the edit's own
 * arguments diffed with jsdiff. Parsing is tolerant (a hand-made or cut hunk still shows) and
 * bounded: past the caps the text is shown plain, never diffed.
 */
import { structuredPatch } from "diff";
import { str } from "./fields.js";

/** One line of a diff as the block shows it. */
export interface DiffLine {
  kind: "add" | "del" | "ctx" | "hunk" | "skip" | "meta";
  /** Line number in the old file (removed and context lines), when known. */
  oldNo?: number;
  /** Line number in the new file (added and context lines), when known. */
  newNo?: number;
  text: string;
}

/** Diff texts longer than this are not parsed: shown plain. */
export const DIFF_MAX_CHARS = 256 * 1024;
/** Lines of one diff shown at most (pi's own outputs stop at 2,000 lines too). */
export const DIFF_MAX_LINES = 2000;
/** An edit whose old and new texts are longer than this together is not diffed: shown as removed then added. */
export const EDIT_MAX_CHARS = 64 * 1024;
/** Of an edit too large to diff, the characters of each side shown. */
const WHOLE_MAX_CHARS = 16 * 1024;
/** The edit distance past which jsdiff gives up (its work grows with it); the texts are then shown whole. */
const MAX_EDIT_LENGTH = 2000;

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;
const DISPLAY = /^([+\- ])( *)(\d+) (.*)$/s;
const DISPLAY_SKIP = /^ +\.\.\.$/;

/** pi's display diff: every line numbered, or a skip marker. */
function isDisplayDiff(lines: string[]): boolean {
  return lines.length > 0 && lines.every((l) => DISPLAY.test(l) || DISPLAY_SKIP.test(l) || l === "");
}

/**
 * Lines of pi's display diff: the number is the new file's for added lines, the old file's
 * otherwise. A context line's new number is its old one moved by the lines added and removed
 * above it (pi shows every change, so the count starts at zero).
 */
function fromDisplay(lines: string[]): DiffLine[] {
  let shift = 0;
  return lines.map((line) => {
    const m = DISPLAY.exec(line);
    if (!m) return { kind: "skip", text: "…" };
    const n = Number(m[3]);
    if (m[1] === "+") {
      shift++;
      return { kind: "add", newNo: n, text: m[4] };
    }
    if (m[1] === "-") {
      shift--;
      return { kind: "del", oldNo: n, text: m[4] };
    }
    return { kind: "ctx", oldNo: n, newNo: n + shift, text: m[4] };
  });
}

/** Lines of a unified diff (file headers skipped, hunk counts not trusted). */
function fromUnified(lines: string[]): DiffLine[] {
  const out: DiffLine[] = [];
  let oldNo: number | undefined;
  let newNo: number | undefined;
  for (const line of lines) {
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      out.push({ kind: "hunk", text: line });
    } else if (/^(---|\+\+\+|Index: |={10,}$|diff )/.test(line) && oldNo === undefined) {
      // file headers before the first hunk
    } else if (line.startsWith("+")) {
      out.push({ kind: "add", newNo, text: line.slice(1) });
      if (newNo !== undefined) newNo++;
    } else if (line.startsWith("-")) {
      out.push({ kind: "del", oldNo, text: line.slice(1) });
      if (oldNo !== undefined) oldNo++;
    } else if (line.startsWith("\\")) {
      out.push({ kind: "meta", text: line });
    } else {
      out.push({ kind: "ctx", oldNo, newNo, text: line.startsWith(" ") ? line.slice(1) : line });
      if (oldNo !== undefined) oldNo++;
      if (newNo !== undefined) newNo++;
    }
  }
  return out;
}

/** A diff text as lines: pi's display format or unified; undefined when too large to parse. */
export function parseDiff(text: string): DiffLine[] | undefined {
  if (text.length > DIFF_MAX_CHARS) return undefined;
  const lines = text.replace(/\n$/, "").split("\n");
  if (lines.length > DIFF_MAX_LINES) return undefined;
  return isDisplayDiff(lines) ? fromDisplay(lines) : fromUnified(lines);
}

/** One replacement requested by an edit call. */
export interface Replacement {
  oldText: string;
  newText: string;
}

/**
 * The replacements an edit call asks for, in every shape pi has accepted: `edits` (an array, a
 * single object, or a JSON string of either), the older `oldText`/`newText` pair, and
 * `old_string`/`new_string` from other agents' edit tools. Non-strings are skipped.
 */
export function replacementsOf(args: Record<string, unknown>): Replacement[] {
  let edits: unknown = args.edits;
  if (typeof edits === "string" && edits.length <= DIFF_MAX_CHARS) {
    try {
      edits = JSON.parse(edits);
    } catch {
      edits = undefined;
    }
  }
  const list = Array.isArray(edits) ? edits : edits && typeof edits === "object" ? [edits] : [];
  const out: Replacement[] = [];
  for (const edit of [...list, args, { oldText: args.old_string, newText: args.new_string }]) {
    const e = (edit ?? {}) as Record<string, unknown>;
    const oldText = str(e.oldText);
    const newText = str(e.newText);
    if (oldText !== undefined && newText !== undefined) out.push({ oldText, newText });
  }
  return out;
}

/** A replacement as removed lines then added lines (for texts too large to diff). */
function wholeLines({ oldText, newText }: Replacement): DiffLine[] {
  const split = (t: string) => (t === "" ? [] : t.slice(0, WHOLE_MAX_CHARS).split("\n"));
  return [
    ...split(oldText).map((text): DiffLine => ({ kind: "del", text })),
    ...split(newText).map((text): DiffLine => ({ kind: "add", text })),
  ];
}

/** The diff of the replacements an edit asked for (line numbers unknown: they are relative to nothing). */
export function diffReplacements(replacements: Replacement[]): DiffLine[] {
  const out: DiffLine[] = [];
  let budget = EDIT_MAX_CHARS * 4;
  replacements.forEach((r, i) => {
    if (replacements.length > 1) out.push({ kind: "hunk", text: `edit ${i + 1} of ${replacements.length}` });
    const size = r.oldText.length + r.newText.length;
    budget -= size;
    const patch =
      size <= EDIT_MAX_CHARS && budget >= 0
        ? structuredPatch("", "", r.oldText, r.newText, undefined, undefined, {
            context: 3,
            maxEditLength: MAX_EDIT_LENGTH,
          })
        : undefined;
    if (!patch) {
      out.push(...wholeLines(r));
      return;
    }
    for (const hunk of patch.hunks) {
      for (const line of hunk.lines) {
        if (line.startsWith("+")) out.push({ kind: "add", text: line.slice(1) });
        else if (line.startsWith("-")) out.push({ kind: "del", text: line.slice(1) });
        else if (!line.startsWith("\\")) out.push({ kind: "ctx", text: line.slice(1) });
        // jsdiff's "No newline at end of file" lines say nothing here: the texts are excerpts, not files.
      }
    }
  });
  return out.length > DIFF_MAX_LINES ? out.slice(0, DIFF_MAX_LINES) : out;
}
