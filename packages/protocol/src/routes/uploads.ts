import { UPLOAD_ID } from "../ids.js";
import { error, jsonl, type RouteSpec } from "./common.js";

/** Uploads of lines too large for one request. */
export const UPLOADS_ROUTES: readonly RouteSpec[] = [
  {
    method: "put",
    path: "/v1/uploads/:uploadId",
    summary: "The bytes of one large line (where the store has no presigned URL)",
    auth: "bearer",
    params: { uploadId: UPLOAD_ID },
    body: jsonl,
    responses: {
      204: { description: "stored" },
      400: error(
        "not an upload id, or bytes not the ticket's length or SHA-256 (nothing kept)",
        "invalid_upload_id",
        "upload_mismatch",
      ),
      404: error("no ticket of this user for this upload, or past its time", "not_found"),
      413: error("over the ticket's length", "too_large"),
      415: error("a compressed body (Content-Encoding): uploads are sent as they are", "upload_encoding"),
    },
  },
];
