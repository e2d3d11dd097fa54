/**
 * Names: the ids clients may use. The blob keys made from them are the storage layout's
 * (`@pisync/store`), re-exported here for the use cases.
 */
import { BadRequest } from "./errors.js";

export { blobKey, segmentKey, sessionPrefix, uploadKey } from "@pisync/store";

/** Session and user ids: what pi writes (uuid v7) and more, but nothing a path could abuse. */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Returns `id` when it is a safe id; throws BadRequest naming `kind` otherwise. */
export function checkId(kind: string, id: string): string {
  if (!SAFE_ID.test(id)) {
    throw new BadRequest(`${kind} must be 1 to 128 of A-Z a-z 0-9 . _ - and start with a letter or digit`);
  }
  return id;
}
