/**
 * How one request survives a server that fails or is busy.
 *
 * - A network error or a 5xx is retried with exponential backoff and full jitter, each wait at
 *   most `MAX_BACKOFF_MS`, `attempts` times in all.
 * - A busy server (429 too many requests, 503 unavailable, 507 storage full) is waited out: the
 *   `Retry-After` it sends (seconds or an HTTP date) is honoured, capped at `MAX_RETRY_AFTER_MS`,
 *   with a little jitter on top so that clients told the same time do not all come back at
 *   once; without it, jittered exponential backoff. Waits of a second or more are announced
 *   (`onWait`). The
 *   waits of one request add up to at most `maxBusyWaitMs`; then it fails with a message that
 *   says the server stayed busy.
 * - An answer too large or too slow (`ResponseTooLarge`, `DeadlineExceeded`) is not retried.
 * A request that keeps failing throws `Transient`: callers treat it as "try again later".
 */
import { CliError } from "./cli-error.js";
import { DeadlineExceeded, type HttpResponse, ResponseTooLarge } from "./http.js";

/** The server could not be reached, kept failing or stayed busy: try again later. */
export class Transient extends Error {}

/** The longest wait between two attempts after a failure: a server back up is tried again within it. */
export const MAX_BACKOFF_MS = 4000;

/** A server's `Retry-After` is honoured up to this; a longer one is shortened to it. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Without `Retry-After`, waits on a busy server grow up to this. */
const MAX_BUSY_BACKOFF_MS = 30_000;

/** Waits shorter than this pass unannounced: nobody notices them, and a log of them would be noise. */
export const ANNOUNCED_WAIT_MS = 1000;

/** Default bound on the waits of one request on a busy server. */
export const DEFAULT_MAX_BUSY_WAIT_MS = 10 * 60_000;

/** Answers that mean "busy: come back later", and what each means, for people. */
const BUSY: Record<number, string> = {
  429: "the server is busy (too many requests)",
  503: "the server's storage is unavailable",
  507: "the server's storage is full",
};

/** A wait on a busy server, as announced before it starts. */
export interface BusyWait {
  /** `PATCH /v1/sessions/…`: the request that waits. */
  request: string;
  status: number;
  /** What the status means, for people. */
  reason: string;
  ms: number;
}

export interface RetryPolicy {
  /** Attempts after network errors and other 5xx answers before `Transient` (default 6). */
  attempts?: number;
  /** The longest total wait of one request on a busy server (default 10 minutes). */
  maxBusyWaitMs?: number;
  /** Told of each wait on a busy server (of {@link ANNOUNCED_WAIT_MS} or more) before it starts. */
  onWait?: (wait: BusyWait) => void;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const sleeper = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Milliseconds a `Retry-After` value asks for: whole seconds, or an HTTP date; undefined when
 * absent or unreadable. A date in the past is 0.
 */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its weekday: a bare number of another shape is not one.
  if (!/^[A-Za-z]{3},/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Whether an answer says "busy: come back later". */
export function isBusy(status: number): boolean {
  return Object.hasOwn(BUSY, status);
}

/** How long to wait after the `n`th (from 0) busy answer of a request. */
export function busyDelay(response: HttpResponse, n: number, random: () => number = Math.random): number {
  const asked = retryAfterMs(response.headers["retry-after"]);
  if (asked !== undefined) {
    const ms = Math.min(MAX_RETRY_AFTER_MS, asked);
    // Never earlier than asked: the jitter only adds.
    return Math.round(ms + random() * Math.max(100, Math.min(1000, ms / 10)));
  }
  return Math.round(Math.min(MAX_BUSY_BACKOFF_MS, 1000 * 2 ** n) * (0.5 + random() / 2));
}

/** Human duration for messages: `800 ms`, `12 s`, `3 min`. */
function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** A wait, said in one line: `waiting 12 s: the server is busy (too many requests) (PATCH /v1/…)`. */
export function describeWait(wait: BusyWait): string {
  return `waiting ${duration(wait.ms)}: ${wait.reason} (${wait.request})`;
}

/**
 * Sends a request (`send` makes one attempt) until it gets an answer that is neither a failure
 * nor busy; see the module's comment for the rules. `request` names it in messages.
 * @throws Transient when it keeps failing or the server stays busy; CliError for an answer too large
 */
export async function withRetries(
  request: string,
  send: () => Promise<HttpResponse>,
  policy: RetryPolicy = {},
): Promise<HttpResponse> {
  const attempts = policy.attempts ?? 6;
  const maxBusyWait = policy.maxBusyWaitMs ?? DEFAULT_MAX_BUSY_WAIT_MS;
  const sleep = policy.sleep ?? sleeper;
  const random = policy.random ?? Math.random;
  let failures = 0;
  let busy = 0;
  let waited = 0;
  let lastError = "";
  for (;;) {
    let response: HttpResponse | undefined;
    try {
      response = await send();
    } catch (error) {
      // The same answer would be as large, or as slow, again: refused at once, not retried.
      if (error instanceof ResponseTooLarge) throw new CliError(error.message);
      if (error instanceof DeadlineExceeded) throw new Transient(error.message);
      lastError = (error as Error).message;
    }
    if (response && isBusy(response.status)) {
      const ms = busyDelay(response, busy++, random);
      const reason = BUSY[response.status];
      if (waited + ms > maxBusyWait) {
        throw new Transient(
          `${request}: ${reason} (HTTP ${response.status}); gave up after waiting ${duration(waited)} in all`,
        );
      }
      waited += ms;
      if (ms >= ANNOUNCED_WAIT_MS) policy.onWait?.({ request, status: response.status, reason, ms });
      await sleep(ms);
      continue;
    }
    if (response && response.status < 500) return response;
    if (response) lastError = `HTTP ${response.status}`;
    if (++failures >= attempts) throw new Transient(`${request}: ${lastError}`);
    await sleep(random() * Math.min(MAX_BACKOFF_MS, 250 * 2 ** failures));
  }
}
