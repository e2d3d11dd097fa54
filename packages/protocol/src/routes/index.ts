/**
 * Every route of the API, as data: method, path (Hono's `:param` syntax), who may call it, its
 * parameters, body and answers, one module per resource beside its handler's name. The OpenAPI
 * document is generated from this list, and a test proves every route the server registers is in it.
 */

import { BLOBS_ROUTES } from "./blobs.js";
import { error, type RouteSpec } from "./common.js";
import { CREDENTIALS_ROUTES } from "./credentials.js";
import { DEVICES_ROUTES } from "./devices.js";
import { INSIGHTS_ROUTES } from "./insights.js";
import { LIBRARY_ROUTES } from "./library.js";
import { MCP_ROUTES } from "./mcp.js";
import { SEARCH_ROUTES } from "./search.js";
import { SERVICE_ROUTES } from "./service.js";
import { SESSIONS_ROUTES } from "./sessions.js";
import { SHARE_PAGE_ROUTES } from "./share-page.js";
import { SHARES_ROUTES } from "./shares.js";
import { SIGN_IN_ROUTES } from "./sign-in.js";
import { TEAMS_ROUTES } from "./teams.js";
import { UPLOADS_ROUTES } from "./uploads.js";

export type { Content, ResponseSpec, RouteSpec } from "./common.js";
export { LIBRARY_ROUTES } from "./library.js";

/** API v1 and the share pages, route by route. */
const API_ROUTES: readonly RouteSpec[] = [
  ...SERVICE_ROUTES,
  ...SEARCH_ROUTES,
  ...INSIGHTS_ROUTES,
  ...SESSIONS_ROUTES,
  ...MCP_ROUTES,
  ...TEAMS_ROUTES,
  ...SHARES_ROUTES,
  ...BLOBS_ROUTES,
  ...UPLOADS_ROUTES,
  ...CREDENTIALS_ROUTES,
  ...SIGN_IN_ROUTES,
  ...DEVICES_ROUTES,
  ...SHARE_PAGE_ROUTES,
  ...LIBRARY_ROUTES,
];

/** API v1 and the share pages, route by route, with the answers storage failures give. */
export const ROUTES: readonly RouteSpec[] = API_ROUTES.map(withStorageResponses);

/**
 * Every route that reaches the store (all but a few static ones) may answer 503 when the store
 * does not answer in time; every change may answer 507 when it is full. Both carry Retry-After.
 */
function withStorageResponses(route: RouteSpec): RouteSpec {
  if (route.auth === "none" && route.method === "get") return route;
  const responses = { ...route.responses };
  const busy = responses[503];
  responses[503] = busy?.codes?.includes("storage_unavailable")
    ? busy
    : error(
        "the storage did not answer in time: retry after Retry-After",
        ...(busy?.codes ?? []),
        "storage_unavailable",
      );
  if (route.method !== "get" && route.method !== "head") {
    responses[507] = error("the storage is full: nothing was written; retry after Retry-After", "storage_full");
  }
  return { ...route, responses };
}
