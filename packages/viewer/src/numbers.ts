/**
 * Numbers a page shows that come from session files (tokens, costs): a stored head may hold a
 * value no arithmetic can print (`null` where a sum overflowed before sums were clamped), so
 * every such number is shown through here, as "—" when it is not a finite number.
 */

/** What a page shows in place of a number that cannot be shown. */
export const NO_NUMBER = "—";

/** `n` shown by `format` when it is a finite number, else {@link NO_NUMBER}. */
export function shownNumber(n: unknown, format: (n: number) => string): string {
  return typeof n === "number" && Number.isFinite(n) ? format(n) : NO_NUMBER;
}

/** A count with en-US separators ("12,345"), or {@link NO_NUMBER}. */
export function grouped(n: unknown): string {
  return shownNumber(n, (v) => v.toLocaleString("en-US"));
}
