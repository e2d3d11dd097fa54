/**
 * Ids the service accepts (their patterns are the wire contract's, in `@pisync/protocol`), and
 * (re-exported from the store's layout) where their bytes live. Every id is checked before it
 * reaches a key or a path.
 */
import { SAFE_ID, SESSION_ID } from "@pisync/protocol";
import { BadRequest } from "./errors.js";

export { blobKey, segmentKey, sessionIndexPrefix, sessionPrefix, uploadKey } from "@pisync/store";
export { SAFE_ID, SESSION_ID };

/** Checks a user id (or another name we give out) against {@link SAFE_ID}. @throws BadRequest `invalid_id` */
export function checkId(kind: string, id: string): string {
  if (!SAFE_ID.test(id)) {
    throw new BadRequest(
      `${kind} must be 1 to 128 of A-Z a-z 0-9 . _ - and start with a letter or digit`,
      "invalid_id",
    );
  }
  return id;
}

/** Checks a session id against {@link SESSION_ID}. @throws BadRequest `invalid_session_id` */
export function checkSessionId(id: string): string {
  if (!SESSION_ID.test(id)) {
    throw new BadRequest(
      "session id must be 1 to 224 of A-Z a-z 0-9 . _ - and start with a letter or digit",
      "invalid_session_id",
    );
  }
  return id;
}
