import { InsightsQuery, InsightsReport } from "../schemas.js";
import { error, json, type RouteSpec } from "./common.js";

/** Usage reports. */
export const INSIGHTS_ROUTES: readonly RouteSpec[] = [
  {
    method: "get",
    path: "/v1/insights",
    summary:
      "Where my tokens, money and time went: by day, week, model, project, device and tool (?team=: a team's, by member for its owner and admins)",
    auth: "bearer",
    query: InsightsQuery,
    responses: {
      200: { description: "the report of the range", content: json(InsightsReport) },
      400: error("a malformed, reversed or over-long range", "bad_request", "bad_query"),
      404: error("?team= names no team of mine", "not_found"),
    },
  },
];
