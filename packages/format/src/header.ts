/**
 * pi's rules for the start of a session file, in one place: where the header is, and which
 * format version the file is written in. Used by the whole-file index, by the service's ingest
 * of a first body, and by the CLI, which reads only a file's first bytes.
 */
import { BLANK_LINE, INVALID_LINE, isHeader, isObject, readValueAt } from "./lines.js";
import type { Problem } from "./problems.js";
import type { SessionHeader } from "./schema.js";

/** Where a session's header was found in the first bytes of its file. */
export interface HeaderSearch {
  /** The header as written; undefined when the first JSON value is not one. */
  header?: SessionHeader;
  /** The header's 1-based line number. */
  headerLine?: number;
  /** Byte offset just past the header line's `\n`: where the entries start. */
  end?: number;
  /** The 1-based line number of an oh-my-pi title slot read past before the header. */
  titleLine?: number;
  /** `title-slot` (read past) or `missing-header` (the first value is not a header), with their line. */
  problems: Problem[];
}

/** The first JSON value at or after line `line` (1-based) starting at byte `from`; blank and invalid lines are skipped, as pi skips them. */
function nextValue(bytes: Uint8Array, from: number, line: number) {
  for (let start = from, n = line; start < bytes.length; n++) {
    const end = bytes.indexOf(0x0a, start);
    if (end < 0) return undefined; // an unfinished line is not read yet
    const value = readValueAt(bytes, start, end - start, start === 0);
    if (value !== BLANK_LINE && value !== INVALID_LINE) return { value, line: n, offset: start, length: end - start };
    start = end + 1;
  }
  return undefined;
}

/**
 * Finds the header in a file's first bytes (`bytes` starts the file; complete lines only are
 * read). pi's rule: the header is the file's first JSON value, blank and invalid lines before it
 * skipped. oh-my-pi writes a title slot line before it, which oh-my-pi itself reads past: so do
 * we. Reads only up to the header.
 *
 * @example
 * const { header, end } = findHeader(readRange(path, 0, 64 * 1024));
 * if (header) console.log(header.id, "entries start at byte", end);
 */
export function findHeader(bytes: Uint8Array): HeaderSearch {
  const first = nextValue(bytes, 0, 1);
  if (!first) return { problems: [] };
  const found = (at: NonNullable<typeof first>, search: HeaderSearch): HeaderSearch => ({
    ...search,
    header: at.value as SessionHeader,
    headerLine: at.line,
    end: at.offset + at.length + 1,
  });
  if (isHeader(first.value)) return found(first, { problems: [] });
  const where = { line: first.line, offset: first.offset, length: first.length };
  if (isObject(first.value) && first.value.type === "title") {
    const next = nextValue(bytes, first.offset + first.length + 1, first.line + 1);
    if (next && isHeader(next.value)) {
      return found(next, {
        titleLine: first.line,
        problems: [{ kind: "title-slot", ...where, message: "oh-my-pi title slot before the header; read past" }],
      });
    }
  }
  return {
    problems: [{ kind: "missing-header", ...where, message: "the file does not start with a session header" }],
  };
}

/**
 * The format version a header declares: its `version` when that is a number, else 1 (v1
 * headers had none). A file without a header is for the caller to judge by its entries.
 *
 * @example headerVersion({ type: "session", id: "a", version: 3 }) // 3
 */
export function headerVersion(header: SessionHeader): number {
  return typeof header.version === "number" ? header.version : 1;
}

/**
 * The header field pisync writes on a session it imported (`pisync pull` of a share link, or of
 * an older generation): how many lines after the header came with the import. Their usage was
 * spent by whoever wrote them, not by this file's owner; pi reads past a field it does not know.
 */
export const IMPORTED_LINES_FIELD = "pisyncImported";

/** The lines after the header a header says were imported (see {@link IMPORTED_LINES_FIELD}), if it says. */
export function importedLinesOf(header: Record<string, unknown> | undefined): number | undefined {
  const value = header?.[IMPORTED_LINES_FIELD];
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
