/**
 * The one error boundary: domain errors become their status from one table, with a message
 * the client can act on; anything else is a bare 500 (logged without the request's secrets).
 */
import {
  BadRequest,
  DomainError,
  GenerationMismatch,
  Gone,
  NotFound,
  OffsetConflict,
  TooLarge,
  Unauthorized,
} from "@pisync/core";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";

const STATUS = new Map<abstract new (...args: never[]) => DomainError, 400 | 401 | 404 | 409 | 410 | 412 | 413>([
  [BadRequest, 400],
  [Unauthorized, 401],
  [NotFound, 404],
  [OffsetConflict, 409],
  [Gone, 410],
  [GenerationMismatch, 412],
  [TooLarge, 413],
]);

export function onError(error: Error, c: Context, log: (line: string) => void = console.error): Response {
  if (error instanceof DomainError) {
    const status = STATUS.get(error.constructor as abstract new (...args: never[]) => DomainError) ?? 400;
    const body: Record<string, unknown> = { error: error.message };
    if (error instanceof OffsetConflict) {
      c.header("Upload-Offset", String(error.committed));
      c.header("ETag", `"${error.generation}"`);
      body.offset = error.committed;
      body.generation = error.generation;
    }
    if (error instanceof GenerationMismatch) {
      c.header("Upload-Offset", String(error.committed));
      c.header("ETag", `"${error.generation}"`);
      body.offset = error.committed;
      body.generation = error.generation;
    }
    if (error instanceof Unauthorized) c.header("WWW-Authenticate", 'Bearer realm="pisync"');
    c.header("Cache-Control", "no-store");
    return c.json(body, status);
  }
  if (error instanceof HTTPException) return c.json({ error: error.message }, error.status);
  log(`pisync: ${c.req.method} ${new URL(c.req.url).pathname} failed: ${error.stack ?? error.message}`);
  return c.json({ error: "internal error" }, 500);
}
