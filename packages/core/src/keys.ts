/**
 * Names: the ids clients may use, and the blob keys made from them. Keys are format/parse
 * pairs with fixed-width hex offsets, so listing order is byte order (as Litestream does).
 */
import { BadRequest } from "./errors.js";

/** Session and user ids: what pi writes (uuid v7) and more, but nothing a path could abuse. */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function checkId(kind: string, id: string): string {
  if (!SAFE_ID.test(id)) {
    throw new BadRequest(`${kind} must be 1 to 128 of A-Z a-z 0-9 . _ - and start with a letter or digit`);
  }
  return id;
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/** Prefix of every blob of a session. */
export function sessionPrefix(userId: string, sessionId: string): string {
  return `sessions/${userId}/${sessionId}/`;
}

/** A segment: bytes [start, end) of a generation; the nonce keeps racing writers apart. */
export function segmentKey(
  userId: string,
  sessionId: string,
  generation: number,
  start: number,
  end: number,
  nonce: string,
) {
  return `${sessionPrefix(userId, sessionId)}${hex(generation, 8)}/${hex(start, 16)}-${hex(end, 16)}-${nonce}`;
}

/** Where a large line is uploaded before an append commits it. */
export function uploadKey(userId: string, uploadId: string): string {
  return `uploads/${userId}/${uploadId}`;
}
