/** Finding a session's header in a file's first bytes. */
import { isHeader, isObject, type SessionHeader } from "@pisync/format";

/**
 * The header at the start of `bytes`: the first line, or the second after an oh-my-pi title
 * slot. `end` is where the rest of the file starts (past the header's newline).
 */
export function headerOf(bytes: Uint8Array): { header: SessionHeader; end: number } | undefined {
  let start = 0;
  for (let line = 0; line < 2 && start < bytes.length; line++) {
    const end = bytes.indexOf(0x0a, start);
    if (end < 0) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder().decode(bytes.subarray(start, end)));
    } catch {
      return undefined;
    }
    if (isHeader(value)) return { header: value, end: end + 1 };
    if (!(isObject(value) && value.type === "title")) return undefined;
    start = end + 1;
  }
  return undefined;
}

/** `7d`, `12h`, `30m`, `45s` or plain seconds; `undefined` for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!match) return undefined;
  const unit = { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "" | "s" | "m" | "h" | "d"];
  return Number(match[1]) * unit;
}
