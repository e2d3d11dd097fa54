import type { SessionHead } from "./ports-sessions.js";

/** A blob that does not exist. */
export class NotFoundError extends Error {
  override readonly name = "NotFoundError";
  constructor(readonly key: string) {
    super(`no object at ${key}`);
  }
}

/** A commit whose expected revision was not the stored one; carries what is stored. */
export class RevisionConflictError extends Error {
  override readonly name = "RevisionConflictError";
  constructor(readonly current: SessionHead | undefined) {
    super(`the session changed (stored revision ${current?.revision ?? "none"})`);
  }
}

/**
 * The store could not be reached, timed out or throttled the request after the client's own
 * bounded retries. On a write, whether it was applied is unknown (see the ports' error
 * contract); the caller answers 503 with `Retry-After` when it cannot find out.
 */
export class StorageUnavailableError extends Error {
  override readonly name = "StorageUnavailableError";
  constructor(
    message: string,
    options?: { cause?: unknown },
    /** Seconds a client should wait before trying again. */
    readonly retryAfter = 2,
  ) {
    super(message, options);
  }
}

/** The store has no room left (a full disk or quota): nothing of the write was kept. */
export class StorageFullError extends Error {
  override readonly name = "StorageFullError";
  constructor(
    message = "the server's storage is full",
    options?: { cause?: unknown },
    /** Seconds a client should wait before trying again (someone has to free space). */
    readonly retryAfter = 10,
  ) {
    super(message, options);
  }
}

/** A list cursor this user's list did not give (malformed, or another user's). */
export class InvalidCursorError extends Error {
  override readonly name = "InvalidCursorError";
  constructor() {
    super("the cursor is not one this list gave");
  }
}
