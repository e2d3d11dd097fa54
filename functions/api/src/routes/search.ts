/**
 * /v1/search: the signed-in user's sessions, searched; and the middleware that keeps the index
 * following every write to /v1/sessions.
 */
import { BadRequest, boundedSearchPage, NotFound, type SearchIndexer, type TeamSearch, type Teams } from "@pisync/core";
import { SearchQuery } from "@pisync/protocol";
import { parseQuery, QueryError, type SearchIndex, type SearchPage } from "@pisync/search";
import type { MiddlewareHandler } from "hono";
import { Hono } from "hono/quick";
import * as z from "zod/mini";
import type { AuthEnv } from "../auth.js";
import { loadViewer } from "../viewer.js";

/**
 * A team page's names, folders and snippets with credentials masked as share pages mask them: a snippet that held
 * one comes back as one masked piece (its highlights dropped, since a credential may span them).
 */
async function maskedSnippets(page: SearchPage): Promise<SearchPage> {
  const { maskText } = await loadViewer();
  const mask = (text: string | undefined) => (text === undefined ? undefined : maskText(text).text);
  return {
    ...page,
    sessions: page.sessions.map((session) => ({
      ...session,
      name: mask(session.name),
      cwd: mask(session.cwd),
      entries: session.entries.map((entry) => {
        const whole = entry.snippet.map((piece) => piece.text).join("");
        const masked = maskText(whole);
        return masked.text === whole ? entry : { ...entry, snippet: [{ text: masked.text, hit: false }] };
      }),
    })),
  };
}

/** What the search routes need: the index and the indexer that feeds it. */
export interface SearchDeps {
  index: SearchIndex;
  indexer: SearchIndexer;
  /** Teams' search (`?team=`): each team a tenant of its own index; `?team=` answers 404 without it. */
  teams?: TeamSearch;
}

/** The contract's query, with the limit's range checked here (a precise message for it). */
const Params = z.object({
  ...SearchQuery.shape,
  limit: z.optional(SearchQuery.shape.limit.check(z.refine((n) => n === undefined || (n >= 1 && n <= 100)))),
});

/**
 * `GET /v1/search?q=&limit=&cursor=`: the signed-in user's sessions searched with the query
 * language of `@pisync/search`; a malformed query answers 400 `bad_query` with what is wrong.
 * `&team=` searches that team's sessions instead (its members only: anyone else gets 404).
 * `clock` dates `since:`/`before:` filters.
 */
export function searchRoutes(search: SearchDeps, clock: () => Date, teams?: Teams) {
  const app = new Hono<AuthEnv>();
  app.get("/", async (c) => {
    const params = Params.safeParse(c.req.query());
    if (!params.success) {
      const issue = params.error.issues[0];
      const field = String(issue?.path[0] ?? "q");
      throw new BadRequest(
        field === "limit" ? "limit must be a whole number from 1 to 100" : `${field} is missing or not valid`,
        "bad_query",
      );
    }
    try {
      const query = parseQuery(params.data.q, clock().getTime());
      const options = { limit: params.data.limit ?? 20, cursor: params.data.cursor };
      const team = params.data.team;
      if (team !== undefined) {
        if (!teams || !search.teams) throw new NotFound("no such team");
        await teams.membership(c.get("userId"), team);
        c.header("Cache-Control", "no-store");
        return c.json(boundedSearchPage(await maskedSnippets(await search.teams.search(team, query, options))));
      }
      const page = await search.index.search(c.get("userId"), query, options);
      c.header("Cache-Control", "no-store");
      return c.json(boundedSearchPage(page));
    } catch (error) {
      if (error instanceof QueryError) throw new BadRequest(error.message, "bad_query");
      throw error;
    }
  });
  return app;
}

/**
 * After a successful write to a session (append, new generation, delete), marks it for the
 * indexer's background drain and answers at once: indexing never slows a write down, and
 * appends close together are indexed in one transaction. What a crash loses before the drain
 * runs, the catch-up pass indexes from the stored bytes.
 */
export function indexAfterWrites(indexer: SearchIndexer, teams?: TeamSearch): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    await next();
    const id = c.req.param("id");
    if (c.req.method === "GET" || c.req.method === "HEAD" || c.res.status >= 300 || !id) return;
    indexer.markDirty(c.get("userId"), id);
    // A session in a team: the team's own index follows it too.
    teams?.written(c.get("userId"), id);
  };
}
