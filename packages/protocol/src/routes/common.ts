/** What every route contract is made of: the types, and the answers and parts routes share. */
import type * as z from "zod/mini";
import { ErrorBody, type ErrorCode } from "../errors.js";
import { HEADERS } from "../headers.js";
import { SESSION_ID, SHARE_TOKEN } from "../ids.js";
import { CsrfForm } from "../schemas.js";
/** What a request or answer body is. */
export type Content =
  | { json: z.ZodMiniType }
  | {
      type:
        | "application/x-ndjson"
        | "application/octet-stream"
        | "text/html"
        | "text/css"
        | "text/javascript"
        | "text/markdown"
        | "text/csv"
        | "image/png";
    }
  /** An HTML form's body (`application/x-www-form-urlencoded`), its fields described by `form`. */
  | { form: z.ZodMiniObject };

/** One answer of a route. */
export interface ResponseSpec {
  description: string;
  content?: Content;
  /** Error codes this answer may carry (its body is then {@link ErrorBody}). */
  codes?: readonly ErrorCode[];
}

/** One route of the contract. */
export interface RouteSpec {
  method: "get" | "head" | "post" | "put" | "patch" | "delete";
  /** Hono's syntax: `/v1/sessions/:id`. */
  path: string;
  summary: string;
  /**
   * `bearer`: `Authorization: Bearer <token>`; `link`: the share token in the path is the
   * credential; `library`: a browser session cookie (`pisync_session`; changes also need this
   * origin and the CSRF token) or a bearer token.
   */
  auth: "bearer" | "none" | "link" | "library";
  /** Patterns of the path's parameters. */
  params?: Record<string, RegExp>;
  query?: z.ZodMiniObject;
  /** Request headers beyond plain HTTP's, with whether they are required. */
  headers?: readonly { name: string; required?: boolean; description: string }[];
  body?: Content;
  responses: Record<number, ResponseSpec>;
}

export const session = { id: SESSION_ID };
export const link = { token: SHARE_TOKEN };
export const json = (schema: z.ZodMiniType): Content => ({ json: schema });
export const error = (description: string, ...codes: ErrorCode[]): ResponseSpec => ({
  description,
  content: json(ErrorBody),
  codes,
});
export const missing = error("missing, or another user's", "not_found", "invalid_session_id");
export const appendErrors = {
  400: error(
    "refused as it is; nothing stored",
    "invalid_offset",
    "invalid_if_match",
    "invalid_upload_id",
    "invalid_session_id",
    "empty_body",
    "incomplete_line",
    "unsupported_encoding",
    "bad_gzip",
    "missing_body_hash",
    "dictionary_mismatch",
    "upload_mismatch",
    "bad_request",
  ),
  404: error("no such session (an append after 0), or no such upload", "not_found"),
  409: error("the offset is not the committed length", "offset_conflict"),
  412: error("If-Match names another generation", "generation_mismatch"),
  413: error("over a limit", "too_large"),
  503: error(
    "the session kept changing under this append, or the storage did not answer: retry after Retry-After",
    "busy",
    "storage_unavailable",
  ),
};
export const appendHeaders = [
  { name: HEADERS.uploadOffset, required: true, description: "where the body starts: the committed length" },
  { name: "If-Match", description: 'the generation the client believes is current, as "3"' },
  { name: "Content-Encoding", description: "gzip or pisync-deflate-dict" },
  { name: HEADERS.bodySha256, description: "with pisync-deflate-dict: hex SHA-256 of the decompressed body" },
  { name: HEADERS.upload, description: "an upload id: the line was uploaded beforehand, the body is empty" },
] as const;
export const jsonl: Content = { type: "application/x-ndjson" };
export const bytes: Content = { type: "application/octet-stream" };
export const html: Content = { type: "text/html" };
export const markdown: Content = { type: "text/markdown" };
export const form: Content = { form: CsrfForm };
export const libraryErrors = {
  401: error("not signed in (a browser gets the sign-in hint page)", "unauthorized"),
  403: error("from another origin, or without the CSRF token", "csrf_rejected"),
};
export const linkErrors = {
  404: error("tampered or unknown link", "not_found"),
  410: error("expired or revoked link", "gone"),
};

/**
 * The signed-in library's pages: a browser session (cookie, with CSRF on changes) or a bearer
 * token. Changes are form posts answered 303 back to a page; another user's session or share
 * answers 404 like a missing one.
 */
export const signedOut = error("not signed in", "unauthorized");
export const missingPage = error("missing, or another user's", "not_found");
export const css: Content = { type: "text/css" };
export const js: Content = { type: "text/javascript" };
export const seeOther = (where: string): ResponseSpec => ({ description: `done: see ${where}` });

export const missingTeam = error("no such team of mine, or no such session in it", "not_found");
