/**
 * `GET /v1/insights`: the signed-in user's usage report over a range of days (the CLI's
 * `pisync insights`). The library's `/insights` page and its CSV are in `library.ts`.
 */
import { insightsRange } from "@pisync/core";
import { InsightsQuery } from "@pisync/protocol";
import { Hono } from "hono";
import type { Services } from "../app.js";
import type { AuthEnv } from "../auth.js";
import { parseQuery } from "../validate.js";

/** `?from=&to=` days, or `?since=30d`; default the last 30 days. */
export function insightsRoutes(services: Services) {
  const app = new Hono<AuthEnv>();
  app.get("/", async (c) => {
    const range = insightsRange(parseQuery(InsightsQuery, c), services.clock());
    c.header("Cache-Control", "no-store");
    return c.json(await services.insights.report(c.get("userId"), range));
  });
  return app;
}
