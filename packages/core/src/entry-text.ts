/**
 * The words of an entry a reader can see, for the tree's search: every string of the entry
 * (message text, thinking, tool calls' arguments, results, commands and their output,
 * summaries, labels, names) but those no page shows (ids, times, signatures, image data).
 */

/** Keys whose values are never shown as text: the tree's links, times, signatures, image bytes. */
const UNSEEN = new Set([
  "id",
  "parentId",
  "targetId",
  "toolCallId",
  "firstKeptEntryId",
  "fromId",
  "timestamp",
  "type",
  "data",
  "mimeType",
  "thinkingSignature",
  "textSignature",
  "signature",
  "encrypted_content",
  "responseId",
  "api",
]);

/** Characters of one entry searched at most: what a page shows of one text (the JSONL has the rest). */
export const SEARCHED_MAX_CHARS = 256 * 1024;

/** Nesting followed at most (session content is hostile). */
const MAX_DEPTH = 32;

/**
 * The searchable text of an entry, lower-cased: its visible strings joined by newlines, at
 * most {@link SEARCHED_MAX_CHARS} of them. Throws nothing.
 */
export function searchableText(entry: unknown, max = SEARCHED_MAX_CHARS): string {
  const parts: string[] = [];
  let size = 0;
  const walk = (value: unknown, depth: number): void => {
    if (size >= max || depth > MAX_DEPTH) return;
    if (typeof value === "string") {
      parts.push(value.length > max - size ? value.slice(0, max - size) : value);
      size += value.length + 1;
    } else if (typeof value === "number" || typeof value === "boolean") {
      // Numbers a page shows (exit codes, line numbers) are found as text too.
      parts.push(String(value));
      size += 8;
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, depth + 1);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        if (key === "usage" || UNSEEN.has(key)) continue;
        walk(item, depth + 1);
      }
    }
  };
  walk(entry, 0);
  return parts.join("\n").toLowerCase();
}
