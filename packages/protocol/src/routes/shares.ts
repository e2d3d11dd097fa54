import { SHARE_ID } from "../ids.js";
import { ShareList } from "../schemas.js";
import { error, json, type RouteSpec } from "./common.js";

/** Share links. */
export const SHARES_ROUTES: readonly RouteSpec[] = [
  {
    method: "get",
    path: "/v1/shares",
    summary: "My share links",
    auth: "bearer",
    responses: { 200: { description: "the shares", content: json(ShareList) } },
  },
  {
    method: "delete",
    path: "/v1/shares/:id",
    summary: "Revoke a share link (effective on its next request)",
    auth: "bearer",
    params: { id: SHARE_ID },
    responses: { 204: { description: "revoked" }, 404: error("no such share", "not_found") },
  },
];
