import { SearchPage, SearchQuery } from "../schemas.js";
import { error, json, type RouteSpec } from "./common.js";

/** Search over one's own sessions (or a team's). */
export const SEARCH_ROUTES: readonly RouteSpec[] = [
  {
    method: "get",
    path: "/v1/search",
    summary:
      'Search my sessions (or ?team= my team\'s): words, "phrases", -exclude, prefix*, cwd: role: since: before: model: label: file:',
    auth: "bearer",
    query: SearchQuery,
    responses: {
      200: { description: "a page of sessions and the cursor of the next", content: json(SearchPage) },
      400: error("a malformed query, or one over the budget (32 words, 4 prefixes)", "bad_query"),
      404: error("?team= names no team of mine", "not_found"),
      503: error("the search passed its time limit, or too many were waiting (Retry-After)", "search_timeout"),
    },
  },
];
