/** The shapes of every name that travels in a URL, a header or a body. */

/**
 * Session ids: pi writes UUIDv7s, and pi 1.x's `--session-id` takes custom ids of any length made
 * of A-Z a-z 0-9 . _ - (starting and ending with a letter or digit). We take the same characters
 * (any last one) up to 224: the longest id pi can save a file for, since its file name
 * `<24-character timestamp>_<id>.jsonl` must fit the 255-byte name limit of common file systems.
 * That length also fits the storage keys the id becomes.
 */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,223}$/;

/** User ids and the other names the service gives out: nothing a path could abuse. */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A device token: `pst_` and 32 random bytes in base64url. */
export const TOKEN = /^pst_[A-Za-z0-9_-]{43}$/;

/** A one-time sign-in link's secret: `psl_` and 32 random bytes in base64url. */
export const LOGIN_SECRET = /^psl_[A-Za-z0-9_-]{43}$/;

/** A browser session's cookie secret: `pss_` and 32 random bytes in base64url. */
export const BROWSER_SECRET = /^pss_[A-Za-z0-9_-]{43}$/;

/** The public id of a device token or a browser session (6 random bytes in hex). */
export const DEVICE_ID = /^[a-f0-9]{12}$/;

/** A share's id: 16 random bytes in base64url. */
export const SHARE_ID = /^[A-Za-z0-9_-]{22}$/;

/** The id of a share-signing key. */
export const SHARE_KEY_ID = /^[A-Za-z0-9]{1,16}$/;

/** A share link's token: `<share id>.<key id>.<HMAC-SHA256 of both, base64url>`. */
export const SHARE_TOKEN = /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{1,16}\.[A-Za-z0-9_-]{43}$/;

/** A large-line upload's id: 16 random bytes in hex. */
export const UPLOAD_ID = /^[a-f0-9]{32}$/;

/** A content-addressed blob's name: the hex SHA-256 of its bytes. */
export const SHA256_HEX = /^[a-f0-9]{64}$/;

/** A team's id: `t` and 8 random bytes in hex. */
export const TEAM_ID = /^t[a-f0-9]{16}$/;

/** A team invite's secret (the last segment of its link): `pti_` and 24 random bytes in base64url. */
export const INVITE_TOKEN = /^pti_[A-Za-z0-9_-]{32}$/;

/** A team route's session: `{id}`, or `{owner}:{id}` (always unique in the team). */
export const TEAM_SESSION_REF = /^(?:[A-Za-z0-9][A-Za-z0-9._-]{0,127}:)?[A-Za-z0-9][A-Za-z0-9._-]{0,223}$/;

/** Whether `id` is a session id the service accepts. */
export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}
