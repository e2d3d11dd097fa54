/**
 * Machine-readable error codes: every error answer is `{ error, code }` (plus the fields some
 * codes carry). Clients decide on `code`; `error` is English for people and may change.
 */
import * as z from "zod/mini";
import { lazySchema } from "./lazy-schema.js";

/** Every code the API answers with, and what it means. */
export const ERROR_CODES = {
  bad_request: "the request is malformed (the message says how)",
  bad_query: "a query parameter is malformed",
  bad_json: "the body is not JSON",
  bad_body: "the JSON body does not have the expected shape",
  invalid_session_id: "the session id is outside the safe set",
  invalid_id: "a user id or another name is outside the safe set",
  invalid_offset: "Upload-Offset is missing or malformed, or a new generation does not start at 0",
  invalid_if_match: "If-Match does not name a generation",
  invalid_upload_id: "Pisync-Upload or the path does not name an upload",
  invalid_blob_name: "a blob is named by the hex SHA-256 of its bytes",
  blob_hash_mismatch: "the body's SHA-256 is not the blob's name",
  empty_body: "an append's body is empty",
  incomplete_line: "an append's body does not end with a newline",
  unsupported_encoding: "the Content-Encoding is not one the API decompresses",
  bad_gzip: "the body is not valid gzip",
  missing_body_hash: "a pisync-deflate-dict body came without Pisync-Body-SHA256",
  dictionary_mismatch:
    "a pisync-deflate-dict body does not decompress to its hash: the client's bytes before the offset differ from the committed ones",
  expiry_out_of_range: "expiresIn is outside 1..maxSeconds (carries maxSeconds)",
  upload_too_large: "an upload is over the largest line the API takes (carries maxBytes)",
  upload_mismatch: "an upload's bytes are not the length or SHA-256 its ticket declared: nothing was kept",
  upload_encoding:
    "an upload's bytes are sent as they are, without Content-Encoding (as S3's presigned PUT takes them): nothing was kept",
  too_many_uploads:
    "the user's open uploads (tickets not yet appended) or their declared bytes are at their bound (carries maxUploads, maxUploadBytes): append or wait for them, then try again",
  too_many_tokens:
    "the user's live tokens are at their bound (carries maxTokens): revoke one (DELETE /v1/tokens/:id, or /devices) first",
  unauthorized: "the bearer token or browser session is missing, malformed, unknown or expired",
  csrf_rejected:
    "a change made from a browser session came from another origin or without its CSRF token (csrf form field or X-CSRF-Token header)",
  invalid_next: "a sign-in link's next is not a path of this server (it starts with one /, no scheme, no //)",
  authorization_pending:
    "a device code is waiting for its person to approve it on /device: poll again after the interval (carries interval)",
  slow_down: "a device code was polled sooner than its interval: the interval grew by 5 s (carries interval)",
  access_denied: "the person denied the device code's sign-in on /device",
  expired_token: "the device code expired (15 minutes), was already used, or is unknown: start again",
  forbidden: "a team member who is not its owner or an admin asked for what only they may do",
  team_policy: "the session's team does not allow this (its policy turned public links off)",
  not_found: "nothing there: missing, or another user's (the two look the same)",
  route_not_found: "no route answers this method and path",
  offset_conflict: "Upload-Offset is not where the committed bytes end (carries offset and generation)",
  gone: "the share link expired or was revoked",
  not_a_title_slot: "a rename's body is not one complete title slot line (an object of type title, without an id)",
  title_slot_mismatch:
    "a rename's first line is not where the session's title slot is: the stored first line is no title slot of the body's length (send the file as a new generation)",
  generation_mismatch: "If-Match names another generation than the current one (carries offset and generation)",
  too_large: "a body, its decompressed size or its line count is over a limit",
  range_not_satisfiable: "the Range lies outside the bytes",
  rate_limited: "too many requests: try again after Retry-After",
  busy: "the session kept changing under this append: try again after Retry-After",
  search_timeout:
    "a search did not finish within its time limit, or too many were waiting: narrow it or try again after Retry-After",
  storage_unavailable:
    "the server's storage did not answer in time (unreachable, timing out or throttling): nothing is lost; try again after Retry-After",
  storage_full: "the server's storage is full: nothing of this request was written; try again after Retry-After",
  internal: "the server failed (logged without the request's secrets)",
} as const;

/** One error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Every code, in a stable order. */
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

/** The code a status answers with when nothing more precise is known. */
export function codeOfStatus(status: number): ErrorCode {
  const codes: Record<number, ErrorCode> = {
    401: "unauthorized",
    404: "not_found",
    409: "offset_conflict",
    410: "gone",
    412: "generation_mismatch",
    413: "too_large",
    416: "range_not_satisfiable",
    429: "rate_limited",
    503: "busy",
    507: "storage_full",
  };
  return codes[status] ?? (status >= 500 ? "internal" : "bad_request");
}

/** An error answer. `offset`/`generation` come with 409 and 412; `maxSeconds` with `expiry_out_of_range`. */
export const ErrorBody = lazySchema(() =>
  z.object({
    error: z.string(),
    code: z.enum(ERROR_CODE_LIST),
    offset: z.optional(z.number()),
    generation: z.optional(z.number()),
    maxSeconds: z.optional(z.number()),
    maxBytes: z.optional(z.number()),
    interval: z.optional(z.number()),
    maxUploads: z.optional(z.number()),
    maxUploadBytes: z.optional(z.number()),
    maxTokens: z.optional(z.number()),
  }),
);
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Whether `value` is an error code (a client may meet codes from a newer server). */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}
