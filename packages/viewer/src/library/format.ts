/** Small formatting helpers of the library's pages (every string escaped here). */
import { escapeHtml } from "../escape.js";
import { grouped, shownNumber } from "../numbers.js";

/** One line of at most `max` characters. */
export function oneLine(value: string, max = 100): string {
  const line = value.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A `<time>` in UTC, its ISO value in `datetime` (the script shows local time on hover). */
export function time(iso: string | undefined): string {
  if (!iso) return "";
  const shown = /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(iso) ? `${iso.slice(0, 16).replace("T", " ")} UTC` : iso.slice(0, 40);
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(shown)}</time>`;
}

/** A count with its noun ("—" for a count that is not a finite number). */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${grouped(n)} ${n === 1 ? one : many}`;
}

/** A cost in dollars ("—" for one that is not a finite number: a stored sum may be null). */
export function dollars(cost: number): string {
  return shownNumber(cost, (c) => `$${c.toFixed(c < 1 ? 4 : 2)}`);
}

/** A query string from pairs, leaving out empty values. */
export function query(pairs: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(pairs)) if (value) params.set(key, value);
  const text = params.toString();
  return text ? `?${text}` : "";
}
