/**
 * /v1/search: the signed-in user's sessions, searched; and the middleware that keeps the index
 * following every write to /v1/sessions.
 */
import { boundedSearchPage, type SearchIndexer } from "@pisync/core";
import { SearchQuery } from "@pisync/protocol";
import { parseQuery, QueryError, type SearchIndex } from "@pisync/search";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import * as z from "zod/mini";
import type { AuthEnv } from "../auth.js";

/** What the search routes need: the index and the indexer that feeds it. */
export interface SearchDeps {
  index: SearchIndex;
  indexer: SearchIndexer;
}

/** The contract's query, with the limit's range checked here (a precise message for it). */
const Params = z.object({
  ...SearchQuery.shape,
  limit: z.optional(SearchQuery.shape.limit.check(z.refine((n) => n === undefined || (n >= 1 && n <= 100)))),
});

function badQuery(c: Context, message: string) {
  return c.json({ error: message, code: "bad_query" }, 400);
}

/**
 * `GET /v1/search?q=&limit=&cursor=`: the signed-in user's sessions searched with the query
 * language of `@pisync/search`; a malformed query answers 400 `bad_query` with what is wrong.
 * `clock` dates `since:`/`before:` filters.
 */
export function searchRoutes(search: SearchDeps, clock: () => Date) {
  const app = new Hono<AuthEnv>();
  app.get("/", async (c) => {
    const params = Params.safeParse(c.req.query());
    if (!params.success) {
      const issue = params.error.issues[0];
      const field = String(issue?.path[0] ?? "q");
      return badQuery(
        c,
        field === "limit" ? "limit must be a whole number from 1 to 100" : `${field} is missing or not valid`,
      );
    }
    try {
      const query = parseQuery(params.data.q, clock().getTime());
      const page = await search.index.search(c.get("userId"), query, {
        limit: params.data.limit ?? 20,
        cursor: params.data.cursor,
      });
      c.header("Cache-Control", "no-store");
      return c.json(boundedSearchPage(page));
    } catch (error) {
      if (error instanceof QueryError) return badQuery(c, error.message);
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
export function indexAfterWrites(indexer: SearchIndexer): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    await next();
    const id = c.req.param("id");
    if (c.req.method === "GET" || c.req.method === "HEAD" || c.res.status >= 300 || !id) return;
    indexer.markDirty(c.get("userId"), id);
  };
}
