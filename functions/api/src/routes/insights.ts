/**
 * `GET /v1/insights`: the signed-in user's usage report over a range of days (the CLI's
 * `pisync insights`). The library's `/insights` page and its CSV are in `library.ts`.
 */
import { insightsRange, NotFound } from "@pisync/core";
import { InsightsQuery } from "@pisync/protocol";
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import type { Services } from "../services.js";
import { parseQuery } from "../validate.js";

/** `?from=&to=` days, or `?since=30d`; default the last 30 days; `&team=` a team's usage. */
export function insightsRoutes(services: Services) {
  const app = new Hono<AuthEnv>();
  app.get("/", async (c) => {
    const query = parseQuery(InsightsQuery, c);
    const range = insightsRange(query, services.clock());
    c.header("Cache-Control", "no-store");
    if (query.team !== undefined) {
      // A team's usage: members see the totals, owners and admins the split by member too.
      if (!services.teams) throw new NotFound("no such team");
      const { parts, perMember, title } = await services.teams.insightsOf(c.get("userId"), query.team);
      return c.json(await services.insights.teamReport(parts, range, { perMember, title }));
    }
    return c.json(await services.insights.report(c.get("userId"), range));
  });
  return app;
}
