/**
 * The signed-in library in the browser: `/` (sessions, filters, search), `/sessions/:id` (the
 * share viewer over the owner's own session, unmasked, with downloads, the pull command and
 * delete), `/shares` (links with their views; create, revoke, revoke all) and their assets.
 * Pages are HTML under the library's CSP; every change is a form POST answered 303.
 * This module only translates HTTP: the rules live in core's `Library`, `Shares` and `Reader`.
 */
import {
  BadRequest,
  boundedSearchPage,
  insightsRange,
  type Library,
  type LibraryFilter,
  NotFound,
  type Reader,
  type Shares,
  searchText,
  shareSession,
  titleOf,
} from "@pisync/core";
import { InsightsQuery, SESSION_ID, SharePageQuery, TreeFindQuery } from "@pisync/protocol";
import { parseQuery as parseSearch, QueryError, type SearchPage } from "@pisync/search";
import type { ShareRow } from "@pisync/viewer/library";
import type { Context } from "hono";
import { compress } from "hono/compress";
import { Hono } from "hono/quick";
import * as z from "zod/mini";
import { LIBRARY_SECURITY_HEADERS, wantsHtml } from "../html.js";
import { type LibraryEnv, publicOrigin, signedIn } from "../library-auth.js";
import { libraryPages } from "../library-pages.js";
import type { Services } from "../services.js";
import { started, textStream } from "../stream.js";
import { parseForm, parseQuery } from "../validate.js";
import { viewerLoaded } from "../viewer.js";
import { rawResponse } from "./raw.js";
import type { SearchDeps } from "./search.js";
import { view as shareView } from "./shares.js";

/** What the library's routes need beside the services. */
export interface LibraryDeps {
  library: Library;
  shares: Shares;
  search?: SearchDeps;
}

/** Sessions per page of the list; hits per page of a search; links per page of shares. */
const PAGE_SIZE = 50;
const SHARES_PAGE = 50;
/** Sessions the share form offers (the latest). */
const SESSIONS_OFFERED = 200;
const HITS_PAGE = 20;
/** Files a session page lists at most. */
const FILES_LISTED = 200;
/** The expiry choices of the share form, in days (within the server's longest). */
const EXPIRY_DAYS = [1, 7, 30, 90];

const DAY = z.optional(z.string().check(z.maxLength(10)));
const ListQuery = z.object({
  q: z.optional(z.string().check(z.maxLength(1000))),
  cwd: z.optional(z.string().check(z.maxLength(4096))),
  model: z.optional(z.string().check(z.maxLength(300))),
  from: DAY,
  to: DAY,
  cursor: z.optional(z.string().check(z.maxLength(2000))),
});
const SharesQuery = z.object({
  cursor: z.optional(z.string().check(z.maxLength(2000))),
  created: z.optional(z.string().check(z.maxLength(200))),
  revoked: z.optional(z.string().check(z.maxLength(20))),
  session: z.optional(z.string().check(z.maxLength(300))),
  leaf: z.optional(z.string().check(z.maxLength(300))),
});
const RawQuery = z.object({ generation: z.optional(z.string().check(z.regex(/^\d{1,9}$/))) });
const CreateForm = z.object({
  session: z.string().check(z.regex(SESSION_ID)),
  expires: z.string().check(z.regex(/^\d{1,3}$/)),
  leaf: z.optional(z.string().check(z.maxLength(224))),
  mask: z.optional(z.string()),
});
const DeleteForm = z.object({ confirm: z.optional(z.string().check(z.maxLength(300))) });

/** The filter of the address (empty values are no filter). */
function filterOf(q: z.infer<typeof ListQuery>): LibraryFilter {
  return { cwd: q.cwd || undefined, model: q.model || undefined, from: q.from || undefined, to: q.to || undefined };
}

/**
 * The library's routes, mounted at the root. Every page needs a signed-in user (see
 * `signedIn`); another user's session or share answers 404 exactly like a missing one.
 */
export function libraryRoutes(services: Services, deps: LibraryDeps) {
  const app = new Hono<LibraryEnv>();
  const pages = ["/", "/library/*", "/sessions/*", "/shares", "/shares/*", "/insights", "/insights.csv"];
  for (const path of [...pages, "/assets/library.css", "/assets/library.js"]) {
    app.use(path, async (c, next) => {
      await next();
      for (const [name, value] of Object.entries(LIBRARY_SECURITY_HEADERS)) c.header(name, value);
    });
  }
  app.get("/assets/library.css", async (c) =>
    c.body((await libraryPages()).LIBRARY_CSS, 200, { "Content-Type": "text/css; charset=utf-8" }),
  );
  app.get("/assets/library.js", async (c) =>
    c.body((await libraryPages()).LIBRARY_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }),
  );

  const auth = signedIn(services);
  for (const path of pages) app.use(path, auth);
  // The owner's session page renders and reads through the viewer, loaded on demand.
  app.use("/sessions/*", viewerLoaded);
  const chrome = (c: Context<LibraryEnv>) => ({ signedIn: true, csrfToken: c.get("csrfToken") });
  const context: LibraryRouteContext = { app, services, deps, chrome };
  listPages(context);
  insightsPages(context);
  sessionPages(context);
  sharesPages(context);
  return app;
}

/** What the library's route groups are mounted with: the app (its middleware set), the services, the page chrome. */
interface LibraryRouteContext {
  app: Hono<LibraryEnv>;
  services: Services;
  deps: LibraryDeps;
  chrome: (c: Context<LibraryEnv>) => { signedIn: boolean; csrfToken: string | undefined };
}

/** The list of sessions (with its search) and the search box's live results. */
function listPages({ app, services, deps, chrome }: LibraryRouteContext): void {
  const { library } = deps;
  const search = async (userId: string, q: string, filter: LibraryFilter, cursor?: string): Promise<SearchPage> => {
    if (!deps.search) throw new BadRequest("search is not enabled on this server", "bad_query");
    const query = parseSearch(searchText(q, filter), services.clock().getTime());
    return boundedSearchPage(await deps.search.index.search(userId, query, { limit: HITS_PAGE, cursor }));
  };

  app.get("/", compress(), async (c) => {
    const params = parseQuery(ListQuery, c);
    const filter = filterOf(params);
    const userId = c.get("userId");
    const list = await library.list(userId, filter, { limit: PAGE_SIZE, cursor: params.q ? undefined : params.cursor });
    const input = { filter: { ...filter, q: params.q }, list, searchable: deps.search !== undefined };
    if (!params.q?.trim()) return c.html((await libraryPages()).renderSessionsPage(chrome(c), input));
    try {
      const found = await search(userId, params.q, filter, params.cursor);
      return c.html((await libraryPages()).renderSessionsPage(chrome(c), { ...input, search: found }));
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      return c.html((await libraryPages()).renderSessionsPage(chrome(c), { ...input, error: error.message }), 400);
    }
  });

  /** The live results of the search box, as JSON (`SearchPage`, as `/v1/search` answers). */
  app.get("/library/search", async (c) => {
    const params = parseQuery(ListQuery, c);
    c.header("Cache-Control", "no-store");
    try {
      return c.json(await search(c.get("userId"), params.q ?? "", filterOf(params), params.cursor));
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      return c.json({ error: error.message, code: "bad_query" }, 400);
    }
  });
}

/** The insights page and its CSV, a user's or a team's. */
function insightsPages({ app, services, chrome }: LibraryRouteContext): void {
  /** The page's range: the API's query, plus how the time chart groups. */
  const InsightsPageQuery = z.object({
    ...InsightsQuery.shape,
    // The form's date fields may come back empty: no date (core checks the rest).
    from: z.optional(z.string().check(z.maxLength(10))),
    to: z.optional(z.string().check(z.maxLength(10))),
    per: z.optional(z.enum(["day", "week"])),
  });
  /** The asked range, or the page that refuses it (a browser gets a page, never raw JSON). */
  const report = async (c: Context<LibraryEnv>) => {
    const raw = { from: c.req.query("from"), to: c.req.query("to"), per: c.req.query("per") };
    try {
      const q = parseQuery(InsightsPageQuery, c);
      const range = insightsRange(
        { from: q.from || undefined, to: q.to || undefined, since: q.since },
        services.clock(),
      );
      const made = await reportOf(c.get("userId"), range, q.team);
      // A long span reads better by week.
      const span = (Date.parse(made.to) - Date.parse(made.from)) / 86_400_000 + 1;
      return { made, per: q.per ?? (span > 120 ? "week" : "day"), since: q.since, team: q.team };
    } catch (error) {
      if (!(error instanceof BadRequest)) throw error;
      const per = raw.per === "week" ? "week" : "day";
      const problem = `That range was not shown: ${error.message}.`;
      for (const [name, value] of Object.entries(LIBRARY_SECURITY_HEADERS)) c.header(name, value);
      return {
        refused: c.html(
          (await libraryPages()).renderInsightsRefused(chrome(c), {
            from: raw.from?.slice(0, 10),
            to: raw.to?.slice(0, 10),
            per,
            problem,
          }),
          400,
        ),
        error,
      };
    }
  };
  /** A user's report, or (`team`) that team's, under the team's rules (see core's `Teams.insightsOf`). */
  const reportOf = async (userId: string, range: ReturnType<typeof insightsRange>, team?: string) => {
    if (team === undefined) return services.insights.report(userId, range);
    if (!services.teams) throw new NotFound("no such team");
    const { parts, perMember, title } = await services.teams.insightsOf(userId, team);
    return services.insights.teamReport(parts, range, { perMember, title });
  };
  app.get("/insights", compress(), async (c) => {
    const asked = await report(c);
    if ("refused" in asked) return asked.refused;
    const { team } = asked;
    const named = team === undefined || !services.teams ? undefined : await services.teams.get(c.get("userId"), team);
    return c.html(
      (await libraryPages()).renderInsightsPage(chrome(c), {
        report: asked.made,
        per: asked.per,
        since: asked.since,
        team: named && { id: named.id, name: named.name },
      }),
    );
  });
  app.get("/insights.csv", async (c) => {
    const asked = await report(c);
    if ("refused" in asked) {
      if (wantsHtml(c)) return asked.refused;
      throw asked.error;
    }
    const made = asked.made;
    return c.body((await libraryPages()).insightsCsv(made), 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="pisync-insights-${made.from}-to-${made.to}.csv"`,
      "Cache-Control": "no-store",
    });
  });
}

/** The owner's session pages: the viewer, its entries, images, tree, find, live state, context, raw bytes and deletion. */
function sessionPages({ app, services, deps, chrome }: LibraryRouteContext): void {
  const { reader, reading, work } = services;
  const { library } = deps;
  const pageQuery = (c: Context) => {
    const q = parseQuery(SharePageQuery, c);
    return { leaf: q.leaf ?? q.leafId, target: q.target ?? q.targetId, before: q.before, from: q.from, after: q.after };
  };
  const session = (c: Context<LibraryEnv>) => library.open(c.get("userId"), c.req.param("id") as string);

  app.get("/sessions/:id", compress(), async (c) => {
    const userId = c.get("userId");
    const id = c.req.param("id");
    const view = await library.page(userId, id, `/sessions/${encodeURIComponent(id)}`, pageQuery(c));
    view.blobs = `/sessions/${encodeURIComponent(id)}/blobs/`;
    const generations = await reader.generations(userId, id);
    view.host = (await libraryPages()).sessionPageHost({
      sessionId: id,
      // The list is the search index's: the page still shows when the index cannot answer.
      files: (await deps.search?.index.files(userId, id, FILES_LISTED).catch(() => undefined)) ?? [],
      generations: generations.map((g) => ({
        generation: g.generation,
        bytes: g.length,
        createdAt: g.createdAt,
        reason: g.reason,
      })),
    });
    return c.html(await work.renderPage(view));
  });
  app.get("/sessions/:id/entries", compress(), async (c) => {
    const { share, head } = await session(c);
    const window = await reading.window(share, head, pageQuery(c));
    return c.html(
      await work.renderEntries({ ...window, blobs: `/sessions/${encodeURIComponent(head.sessionId)}/blobs/` }),
    );
  });
  /** An image the session names, kept as a blob (oh-my-pi's `blob:sha256:`). */
  app.get("/sessions/:id/blobs/:hash", async (c) => {
    const { head } = await session(c);
    const image = await services.blobs.sessionImage(
      head,
      c.req.param("hash"),
      async () => (await reader.raw(head.userId, head.sessionId, {})).bytes,
    );
    c.header("Content-Type", image.contentType);
    return c.body(image.bytes as Uint8Array<ArrayBuffer>);
  });
  app.get("/sessions/:id/tree", compress(), async (c) => {
    return c.json(await library.tree(c.get("userId"), c.req.param("id"), pageQuery(c).leaf));
  });
  app.get("/sessions/:id/find", async (c) => {
    const { q, from } = parseQuery(TreeFindQuery, c);
    const { share, head } = await session(c);
    return c.json(await reading.find(share, head, q, from));
  });
  app.get("/sessions/:id/state", async (c) => {
    const { share, head } = await session(c);
    const state = await reading.state(share, head);
    const etag = `"${state.generation}-${state.bytes}"`;
    c.header("ETag", etag);
    if (c.req.header("If-None-Match") === etag) return c.body(null, 304);
    // A live page updates its header with these (only when the session moved: a 304 reads nothing).
    return c.json(share.leafId === undefined ? { ...state, facts: await reading.liveFacts(share, head) } : state);
  });
  app.get("/sessions/:id/context", async (c) => {
    const { share, head } = await session(c);
    const pieces = await started(reading.context(share, head, pageQuery(c).leaf));
    c.header("Content-Type", "application/json; charset=utf-8");
    return c.body(textStream(pieces));
  });
  /** The exact bytes of the current generation, or of `?generation=N`, as a download. */
  app.get("/sessions/:id/raw", async (c) => {
    const { generation } = parseQuery(RawQuery, c);
    const id = c.req.param("id");
    // The id goes into a header: anything not an id is a missing session, never a 500.
    if (!SESSION_ID.test(id)) throw new NotFound("no such session");
    const n = generation === undefined ? undefined : Number(generation);
    const response = await rawResponse(c, reader, c.get("userId"), id, n);
    // Named once the bytes are found: a 404 (a browser's page) must not arrive as a download.
    response.headers.set(
      "Content-Disposition",
      `attachment; filename="${id}${n === undefined ? "" : `-generation-${n}`}.jsonl"`,
    );
    return response;
  });

  app.get("/sessions/:id/delete", async (c) => {
    const { head } = await session(c);
    return c.html((await libraryPages()).renderDeletePage(chrome(c), deletion(head)));
  });
  app.post("/sessions/:id/delete", async (c) => {
    const { head } = await session(c);
    const { confirm } = await parseForm(DeleteForm, c);
    if ((confirm ?? "").trim() !== head.sessionId) {
      const error = "The id typed is not this session's: nothing was deleted.";
      return c.html((await libraryPages()).renderDeletePage(chrome(c), { ...deletion(head), error }), 400);
    }
    await reader.delete(c.get("userId"), head.sessionId, services.clock());
    deps.search?.indexer.markDirty(c.get("userId"), head.sessionId);
    return c.redirect("/", 303);
  });
}

/** The share links page: the list, a new link, revocations. */
function sharesPages({ app, services, deps, chrome }: LibraryRouteContext): void {
  const { reader } = services;
  const { library } = deps;
  app.get("/shares", async (c) => {
    const userId = c.get("userId");
    const origin = publicOrigin(c, services.publicUrl);
    const params = parseQuery(SharesQuery, c);
    const [page, latest] = await Promise.all([
      library.shares(userId, { limit: SHARES_PAGE, cursor: params.cursor }),
      library.latest(userId, SESSIONS_OFFERED),
    ]);
    const shares: ShareRow[] = page.shares.map((s) => ({
      id: s.id,
      sessionId: s.sessionId,
      sessionTitle: page.titles.get(s.sessionId),
      leafId: s.leafId,
      status: deps.shares.statusOf(s),
      createdAt: s.createdAt,
      expiresAt: s.expiresAt,
      revokedAt: s.revokedAt,
      maskSecrets: s.maskSecrets,
      views: s.views ?? 0,
      downloads: s.downloads ?? 0,
      lastViewedAt: s.lastViewedAt,
    }));
    // The link just made is read by its id: it may not be on this page.
    const made = params.created ? await library.share(userId, params.created) : undefined;
    const active = made && deps.shares.statusOf(made) === "active" ? made : undefined;
    // Only a count is said: the address must not put words in the page's mouth.
    const revoked = /^\d{1,6}$/.exec(params.revoked ?? "")?.[0];
    const maxDays = Math.floor(deps.shares.limits.maxSeconds / 86400);
    return c.html(
      (await libraryPages()).renderSharesPage(chrome(c), {
        shares,
        next: page.cursor ? `/shares?cursor=${encodeURIComponent(page.cursor)}` : undefined,
        created: active
          ? { url: (await shareView(deps.shares, active, origin)).url, sessionId: active.sessionId }
          : undefined,
        sessions: latest.map((card) => ({ id: card.sessionId, title: titleOf(card) })),
        form: { session: params.session, leaf: params.leaf },
        expiryDays: [...new Set([...EXPIRY_DAYS.filter((d) => d <= maxDays), maxDays])],
        message: revoked === undefined ? undefined : `${revoked} link${revoked === "1" ? "" : "s"} revoked.`,
      }),
    );
  });
  app.post("/shares", async (c) => {
    const form = await parseForm(CreateForm, c);
    const { share } = await shareSession(reader, deps.shares, {
      userId: c.get("userId"),
      sessionId: form.session,
      leafId: form.leaf?.trim() || undefined,
      expiresIn: Number(form.expires) * 86400,
      maskSecrets: form.mask !== undefined,
    });
    return c.redirect(`/shares?created=${encodeURIComponent(share.id)}`, 303);
  });
  app.post("/shares/revoke-all", async (c) => {
    const count = await deps.shares.revokeAll(c.get("userId"));
    return c.redirect(`/shares?revoked=${count}`, 303);
  });
  app.post("/shares/:id/revoke", async (c) => {
    await deps.shares.revoke(c.get("userId"), c.req.param("id"));
    return c.redirect("/shares?revoked=1", 303);
  });
}

/** What the delete confirmation shows of a session. */
function deletion(head: Awaited<ReturnType<Reader["head"]>>) {
  return {
    sessionId: head.sessionId,
    title: head.summary.name || head.summary.firstMessage || head.sessionId,
    entries: head.summary.entries,
    generations: head.generations,
  };
}
