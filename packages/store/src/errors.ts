import type { SessionHead } from "./ports.js";

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
