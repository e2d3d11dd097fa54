/**
 * Ids the service accepts, and (re-exported from the store's layout) where their bytes live.
 * Every id is checked before it reaches a key or a path.
 */
import { BadRequest } from "./errors.js";

export { blobKey, segmentKey, sessionPrefix, uploadKey } from "@pisync/store";

/** User ids and the other names we give out: nothing a path could abuse. */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Session ids: pi writes UUIDv7s, and pi 1.x's `--session-id` takes custom ids of any length made
 * of A-Z a-z 0-9 . _ - (starting and ending with a letter or digit). We take the same characters
 * (any last one) up to 224: the longest id pi can save a file for, since its file name
 * `<24-character timestamp>_<id>.jsonl` must fit the 255-byte name limit of common file systems.
 * That length also fits where we put the id: a folder name of the embedded store (255 bytes), an
 * S3 key (1,024 bytes, with the user id and segment names) and DynamoDB keys (sort key 1,024 bytes,
 * partition key 2,048).
 */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,223}$/;

/** Checks a user id (or another name we give out) against {@link SAFE_ID}; returns it. @throws BadRequest */
export function checkId(kind: string, id: string): string {
  if (!SAFE_ID.test(id)) {
    throw new BadRequest(`${kind} must be 1 to 128 of A-Z a-z 0-9 . _ - and start with a letter or digit`);
  }
  return id;
}

/** Checks a session id against {@link SESSION_ID}; returns it. @throws BadRequest */
export function checkSessionId(id: string): string {
  if (!SESSION_ID.test(id)) {
    throw new BadRequest("session id must be 1 to 224 of A-Z a-z 0-9 . _ - and start with a letter or digit");
  }
  return id;
}
