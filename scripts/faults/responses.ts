/**
 * Responses by class: what the writers heard, counted per phase of a run. A failed request must
 * be a 503 or a 507 with `Retry-After` (a busy or unavailable store, a full disk); a plain 500,
 * or a 5xx without `Retry-After`, is a fault the client cannot tell from a bug.
 */

/** The classes of responses, in the order the table prints them. */
export const CLASSES = ["2xx", "409", "429+RA", "503+RA", "507+RA", "500", "5xx-noRA", "4xx", "lost"] as const;

export type ResponseClass = (typeof CLASSES)[number];

/** The class of an HTTP response, or `lost` for none (connection refused, reset, timed out). */
export function classify(answer: { status: number; retryAfter: boolean } | undefined): ResponseClass {
  if (!answer) return "lost";
  const { status, retryAfter } = answer;
  if (status < 300) return "2xx";
  if (status === 409) return "409";
  if ((status === 429 || status === 503 || status === 507) && retryAfter) return `${status}+RA` as ResponseClass;
  if (status === 500) return "500";
  if (status >= 500 || status === 429) return "5xx-noRA";
  return "4xx";
}

/** Classes that are failures a client must not see: 500s, and 5xx without Retry-After. */
export const BAD_FAILURES: readonly ResponseClass[] = ["500", "5xx-noRA"];

/** Counts of answers by class, and the first distinct failure answers (status and code) as examples. */
export class ResponseCounts {
  readonly counts = new Map<ResponseClass, number>();
  /** `status code` → how many, for every answer of 400 and over. */
  readonly failures = new Map<string, number>();
  /** The longest a request waited for its answer (or for giving up on it), in ms. */
  slowestMs = 0;

  /** Notes how long a request took. */
  took(ms: number): void {
    this.slowestMs = Math.max(this.slowestMs, ms);
  }

  add(responseClass: ResponseClass, detail?: string): void {
    this.counts.set(responseClass, (this.counts.get(responseClass) ?? 0) + 1);
    if (detail) this.failures.set(detail, (this.failures.get(detail) ?? 0) + 1);
  }

  get(responseClass: ResponseClass): number {
    return this.counts.get(responseClass) ?? 0;
  }

  /** 500s and 5xx answers without Retry-After. */
  get badFailures(): number {
    return BAD_FAILURES.reduce((sum, c) => sum + this.get(c), 0);
  }

  /** The counts as a plain object (for JSON), classes with none left out. */
  toJSON(): Partial<Record<ResponseClass, number>> {
    return Object.fromEntries(CLASSES.filter((c) => this.get(c)).map((c) => [c, this.get(c)]));
  }
}
