/**
 * The one error boundary: domain errors become their status from one table, with a message
 * for people and a machine-readable code (`@pisync/protocol`'s `ErrorCode`) clients decide on;
 * storage that did not answer is a 503 and storage that is full a 507, both with Retry-After;
 * anything else is a bare 500 (logged without the request's secrets).
 */
import {
  BadRequest,
  Busy,
  DomainError,
  Forbidden,
  GenerationMismatch,
  Gone,
  NotFound,
  OffsetConflict,
  SlotMismatch,
  TooLarge,
  TooMany,
  Unauthorized,
  UnsupportedMediaType,
} from "@pisync/core";
import { codeOfStatus, type ErrorBody, HEADERS } from "@pisync/protocol";
import { SearchTimeout } from "@pisync/search";
import { StorageFullError, StorageUnavailableError } from "@pisync/store";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { htmlError, wantsHtml } from "./html.js";

/**
 * A log line without secrets: share-link tokens (in `/s/<token>` paths or anywhere else) are
 * cut out, and so are sign-in link and browser session secrets (`/login/<secret>`); bearer tokens
 * never reach a log line (headers are not logged).
 */
export function redact(line: string): string {
  return line
    .replace(/\/s\/[^/\s?#"']+/g, "/s/[link]")
    .replace(/[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{1,16}\.[A-Za-z0-9_-]{20,}/g, "[link]")
    .replace(/\bpst_[A-Za-z0-9_-]+/g, "[token]")
    .replace(/\bps[ls]_[A-Za-z0-9_-]+/g, "[secret]");
}

const STATUS = new Map<
  abstract new (
    ...args: never[]
  ) => DomainError,
  400 | 401 | 403 | 404 | 409 | 410 | 412 | 413 | 415 | 429 | 503
>([
  [BadRequest, 400],
  [Unauthorized, 401],
  [Forbidden, 403],
  [NotFound, 404],
  [OffsetConflict, 409],
  [SlotMismatch, 409],
  [Gone, 410],
  [GenerationMismatch, 412],
  [TooLarge, 413],
  [UnsupportedMediaType, 415],
  [TooMany, 429],
  [Busy, 503],
]);

/**
 * Turns an error into its answer: a domain error into `{ error, code, ...fields }` with its
 * status (a browser gets a page for 404 and 410); anything else into a bare 500, logged.
 */
export function onError(
  error: Error,
  c: Context,
  log: (line: string) => void = console.error,
): Response | Promise<Response> {
  if (error instanceof DomainError) {
    const status = STATUS.get(error.constructor as abstract new (...args: never[]) => DomainError) ?? 400;
    const body: ErrorBody = { error: error.message, code: error.code, ...error.fields };
    if (error instanceof OffsetConflict || error instanceof GenerationMismatch) {
      c.header(HEADERS.uploadOffset, String(error.committed));
      c.header("ETag", `"${error.generation}"`);
    }
    if (error instanceof Unauthorized) c.header("WWW-Authenticate", 'Bearer realm="pisync"');
    if (error instanceof Busy || error instanceof TooMany) c.header("Retry-After", String(error.retryAfter));
    if ((status === 404 || status === 410) && wantsHtml(c)) return htmlError(c, status, error.message);
    c.header("Cache-Control", "no-store");
    return c.json(body, status);
  }
  if (error instanceof SearchTimeout) {
    // The server is fine; this search was too costly or came at a busy moment.
    c.header("Retry-After", "1");
    c.header("Cache-Control", "no-store");
    return c.json({ error: error.message, code: error.code } satisfies ErrorBody, 503);
  }
  if (error instanceof StorageUnavailableError || error instanceof StorageFullError) {
    const full = error instanceof StorageFullError;
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    log(redact(`pisync: ${c.req.method} ${new URL(c.req.url).pathname}: ${error.message}${cause}`));
    c.header("Retry-After", String(error.retryAfter));
    c.header("Cache-Control", "no-store");
    const body: ErrorBody = full
      ? { error: "the server's storage is full: nothing of this request was written", code: "storage_full" }
      : {
          error: "the server's storage did not answer in time: nothing is lost; try again",
          code: "storage_unavailable",
        };
    return c.json(body, full ? 507 : 503);
  }
  if (error instanceof HTTPException) {
    return c.json({ error: error.message, code: codeOfStatus(error.status) } satisfies ErrorBody, error.status);
  }
  log(redact(`pisync: ${c.req.method} ${new URL(c.req.url).pathname} failed: ${error.stack ?? error.message}`));
  return c.json({ error: "internal error", code: "internal" } satisfies ErrorBody, 500);
}
