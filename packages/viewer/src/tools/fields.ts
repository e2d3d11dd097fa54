/**
 * Reading a tool call and its result as stored: every field may be missing or of any JSON type
 * (session content is hostile), so each reader answers a plain value or undefined and never throws.
 */

/** A string field, or undefined when it is not a string. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A finite number field, or undefined. */
export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** An object field (not an array), or an empty object. */
export function obj(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The parts of a result's content: pi stores an array of parts; a bare string counts as one text part. */
function parts(result: Record<string, unknown> | undefined): Record<string, unknown>[] {
  const content = result?.content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.map(obj) : [];
}

/** The text of a result: its text parts joined by newlines (as pi shows them). */
export function resultText(result: Record<string, unknown> | undefined): string {
  return parts(result)
    .filter((p) => p.type === "text" && typeof p.text === "string")
    .map((p) => p.text as string)
    .join("\n");
}

/** The image parts of a result. */
export function resultImages(result: Record<string, unknown> | undefined): { mimeType: unknown; data: unknown }[] {
  return parts(result)
    .filter((p) => p.type === "image")
    .map((p) => ({ mimeType: p.mimeType, data: p.data }));
}

/** Lines of a text (a trailing newline ends the last line rather than starting another). */
export function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

const encoder = new TextEncoder();

/** A text's UTF-8 size, as people read it: "812 B", "9.1 KB", "2.4 MB". */
export function sizeOf(text: string): string {
  const bytes = encoder.encode(text).length;
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** "1 line", "2,100 lines". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** Characters of one short field (a name, a path, a pattern, a mark) shown at most. */
export const FIELD_MAX_CHARS = 1000;

/** A short field cut to {@link FIELD_MAX_CHARS}, marked with "…" when cut. */
/**
 * A tool name as an attribute value for styles and scripts: letters, digits, `_`, `-` and `.` only
 * (a hostile name never becomes a `javascript:`-looking attribute), at most 64 characters.
 */
export function toolAttr(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 64) || "unknown";
}

export function clip(text: string, max = FIELD_MAX_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** How far from its end a text is searched for a closing note (pi's notes are short). */
const TAIL_CHARS = 4096;

/**
 * Splits a closing paragraph matching `pattern` (anchored with `$`) off the end of a text. Only
 * the text's tail is searched, so a hostile output cannot make the pattern's work grow with it.
 */
export function splitEnd(text: string, pattern: RegExp): { rest: string; match: RegExpExecArray | null } {
  const cut = text.length > TAIL_CHARS;
  // A NUL before a cut tail keeps `^` from matching where the cut fell.
  const tail = cut ? `\0${text.slice(-TAIL_CHARS)}` : text;
  const match = pattern.exec(tail);
  if (!match) return { rest: text, match };
  const start = cut ? text.length - TAIL_CHARS - 1 + match.index : match.index;
  return { rest: text.slice(0, start), match };
}
