import type { RouteSpec } from "./common.js";

/** Liveness and the OpenAPI document. */
export const SERVICE_ROUTES: readonly RouteSpec[] = [
  { method: "get", path: "/healthz", summary: "Liveness", auth: "none", responses: { 200: { description: "ok" } } },
  {
    method: "get",
    path: "/openapi.json",
    summary: "This description of the API",
    auth: "none",
    responses: { 200: { description: "an OpenAPI 3.1 document" } },
  },
];
