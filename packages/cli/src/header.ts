/** Finding a session's header in a file's first bytes. */
import { findHeader, type SessionHeader } from "@pisync/format";

/**
 * The header at the start of `bytes` (pi's rule, from `@pisync/format`: the first JSON value,
 * read past an oh-my-pi title slot). `end` is where the rest of the file starts (past the
 * header's newline).
 */
export function headerOf(bytes: Uint8Array): { header: SessionHeader; end: number } | undefined {
  const { header, end } = findHeader(bytes);
  return header && end !== undefined ? { header, end } : undefined;
}

/** `7d`, `12h`, `30m`, `45s` or plain seconds; `undefined` for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!match) return undefined;
  const unit = { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "" | "s" | "m" | "h" | "d"];
  return Number(match[1]) * unit;
}
