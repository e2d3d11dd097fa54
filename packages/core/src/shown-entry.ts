/**
 * What a page shows of one entry: the entry itself, or (nested too deep, or too large, to walk
 * safely) its text. Renderers, maskers and the worker hand-off (structured cloning) walk values
 * recursively: a line nested 5,000 deep, which `JSON.parse` reads, would overflow them all.
 */
import { deeperThan, type EntryRecord, stringifyJson } from "@pisync/format";
import { RENDER_LIMITS } from "@pisync/protocol";
import type { PageEntry } from "@pisync/viewer";

/** The {@link PageEntry} of a record and its (masked) entry. */
export function shownEntry(record: EntryRecord, entry: Record<string, unknown>): PageEntry {
  const shown = { id: record.id as string, type: record.type as string, timestamp: record.timestamp };
  const why =
    record.length > RENDER_LIMITS.lineBytes
      ? `a line of ${record.length.toLocaleString("en-US")} bytes`
      : deeperThan(entry, RENDER_LIMITS.depth)
        ? `a line nested more than ${RENDER_LIMITS.depth} deep`
        : undefined;
  if (why === undefined) return { ...shown, entry };
  const text = stringifyJson(entry, RENDER_LIMITS.textChars + 1) ?? "";
  const cut = text.length > RENDER_LIMITS.textChars;
  return { ...shown, entry: {}, asText: { why, text: cut ? text.slice(0, RENDER_LIMITS.textChars) : text, cut } };
}
