/**
 * Text from a session (a header's `cwd`, a name, a first message) or from a server is hostile:
 * printed raw, an escape sequence can rewrite the terminal. These helpers make it inert.
 */

/** C0 controls, DEL, C1 controls, and the Unicode marks that reorder or hide text. */
export function isControl(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    code === 0xfeff
  );
}

/** `text` with each control character replaced by `by(char)` (newlines kept when asked). */
export function replaceControls(text: string, by: (char: string) => string, keepNewlines = false): string {
  let out = "";
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!isControl(code) || (keepNewlines && code === 0x0a)) continue;
    out += text.slice(last, i) + by(text[i]);
    last = i + 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

function escapeChar(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** One line of text for a terminal: every control character shown as `\xNN` / `\uNNNN`. */
export function sanitize(text: string): string {
  return replaceControls(text, escapeChar);
}

/** The same, keeping newlines (for text printed over several lines). */
export function sanitizeLines(text: string): string {
  return replaceControls(text, escapeChar, true);
}

/**
 * JSON for a terminal or a log: `JSON.stringify` escapes C0 controls but leaves DEL, C1
 * controls and the reordering marks raw; this escapes them too (still valid JSON).
 */
export function safeJson(value: unknown, space?: number): string {
  return replaceControls(
    JSON.stringify(value, null, space),
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    true,
  );
}
