import { SHA256_HEX } from "../ids.js";
import { bytes, error, type RouteSpec } from "./common.js";

/** Images kept apart from the lines (blobs). */
export const BLOBS_ROUTES: readonly RouteSpec[] = [
  {
    method: "head",
    path: "/v1/blobs/:hash",
    summary: "Whether I hold the blob",
    auth: "bearer",
    params: { hash: SHA256_HEX },
    responses: { 200: { description: "held" }, 404: { description: "not held" } },
  },
  {
    method: "get",
    path: "/v1/blobs/:hash",
    summary: "A content-addressed blob (oh-my-pi's images)",
    auth: "bearer",
    params: { hash: SHA256_HEX },
    responses: {
      200: { description: "the bytes", content: bytes },
      400: error("not a SHA-256", "invalid_blob_name"),
      404: error("not held", "not_found"),
    },
  },
  {
    method: "put",
    path: "/v1/blobs/:hash",
    summary: "Store a blob under the SHA-256 of its bytes",
    auth: "bearer",
    params: { hash: SHA256_HEX },
    body: bytes,
    responses: {
      204: { description: "stored" },
      400: error("a bad name or body", "invalid_blob_name", "blob_hash_mismatch", "bad_gzip", "unsupported_encoding"),
      413: error("over the request limit", "too_large"),
    },
  },
];
