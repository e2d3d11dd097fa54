/**
 * `createApp(deps)`: the whole HTTP API as one Hono app. The Lambda entry and the Node entry
 * are thin translators around it; tests call `app.request()` directly.
 */
import {
  Appender,
  Blobs,
  BrowserSessions,
  DEFAULT_SHARE_LIMITS,
  Identities,
  Library,
  Memo,
  Reader,
  type ReaderCacheLimits,
  SessionPages,
  type ShareKeys,
  ShareReading,
  Shares,
  Tokens,
  Uploads,
} from "@pisync/core";
import type { ErrorBody } from "@pisync/protocol";
import type { Stores } from "@pisync/store";
import type { Context, MiddlewareHandler } from "hono";
// The linear router: nothing to compile on the first request (the default one then builds one
// expression of every route: about 12 ms of a cold start's CPU here, `npm run bench:bundle`).
import { Hono } from "hono/quick";
import { type AuthEnv, bearerAuth } from "./auth.js";
import { onError, redact } from "./errors.js";
import { htmlError, wantsHtml } from "./html.js";
import { lazyService } from "./lazy-service.js";
import type { PreviewRenderer } from "./preview/card.js";
import { type RateLimits, rateLimits } from "./rate-limit.js";
import { blobRoutes } from "./routes/blobs.js";
import { deviceCodeRoutes, devicePageRoutes } from "./routes/device-flow.js";
import { deviceRoutes } from "./routes/devices.js";
import { insightsRoutes } from "./routes/insights.js";
import { libraryRoutes } from "./routes/library.js";
import { mcpRoutes } from "./routes/mcp.js";
import { indexAfterWrites, type SearchDeps, searchRoutes } from "./routes/search.js";
import { sessionRoutes } from "./routes/sessions.js";
import { sharePageRoutes } from "./routes/share-page.js";
import { createShareRoute, shareRoutes } from "./routes/shares.js";
import { loginLinkRoutes, signInRoutes } from "./routes/sign-in.js";
import { teamPageRoutes } from "./routes/team-pages.js";
import { joinRoutes, leaveTeamOnDelete, sessionTeamRoutes, teamRoutes } from "./routes/teams.js";
import { tokenRoutes } from "./routes/tokens.js";
import { uploadRoutes } from "./routes/uploads.js";
import { whoamiRoutes } from "./routes/whoami.js";
import { type AppLimits, DEFAULT_LIMITS, type Services } from "./services.js";
import { inlineWork, type ShareWork } from "./share-work.js";
import { loadViewer, viewer, viewerLoaded } from "./viewer.js";

// The app's callers (the entries, tests, benches) take these from here too.
export { type AppLimits, DEFAULT_LIMITS, type Services };

export interface AppDeps {
  stores: Stores;
  limits?: Partial<AppLimits>;
  clock?: () => Date;
  /** Where errors are logged (never with request secrets). */
  log?: (line: string) => void;
  /** The share-signing keys (read lazily: on Lambda they come from Secrets Manager). */
  shareKeys?: () => Promise<ShareKeys>;
  /** Longest life of a share link, in days (default 90). */
  maxShareDays?: number;
  /** Where rendering and masking of shares run (default: inline; the Node server uses a worker pool). */
  work?: ShareWork;
  /** Request limits per client and per share link (the Node server sets them; Lambda has reserved concurrency). */
  rateLimits?: { limits: RateLimits; clientIp: (c: Context) => string };
  /** What the reader keeps between requests (default `DEFAULT_READER_CACHE`; the Node server keeps more). */
  readerCache?: Partial<ReaderCacheLimits>;
  /** Search over a user's sessions; `/v1/search` answers 404 without it. */
  search?: SearchDeps;
  /**
   * The server's public URL (`https://pisync.example.com`), for sign-in links and the CSRF
   * origin check; default: the request's own origin (`X-Forwarded-Proto` honoured).
   */
  publicUrl?: string;
  /** Draws share links' preview images (default: the work's: satori and resvg, on the share pool's threads on the Node server). */
  preview?: PreviewRenderer;
  /**
   * Whether every answer is read whole before it leaves the app (the Lambda entry's: its
   * function URL sends nothing before the end anyway), so that a streamed answer whose storage
   * fails midway answers its error (a 503) rather than failing the invocation. The Node server
   * streams instead, and breaks the connection off on such a failure.
   */
  bufferResponses?: boolean;
}

/**
 * The pisync HTTP API as a Hono app: `/v1/*` behind bearer tokens, the share pages under
 * `/s/*`, `/healthz`, every error answered by {@link onError}. The same app serves the Lambda
 * entry and `npm start`; only `deps` differ. Throws nothing itself: failures become answers.
 *
 * @example
 * ```ts
 * const app = createApp({ stores: embeddedStores(dir) });
 * const res = await app.request("/healthz");
 * ```
 */
export function createApp(deps: AppDeps) {
  const clock = deps.clock ?? (() => new Date());
  const limits = { ...DEFAULT_LIMITS, ...deps.limits };
  const reader = new Reader(deps.stores, deps.readerCache);
  const work = deps.work ?? inlineWork;
  const reading = new ShareReading(reader, {
    maskLines: work.maskLines,
    maskTexts: work.maskTexts,
    // Only share routes mask single texts, and they run behind `viewerLoaded`.
    maskText: (t) => viewer().maskText(t).text,
  });
  const teamStore = deps.stores.teams;
  const services: Services = {
    appender: new Appender(deps.stores, clock, { maxLines: limits.maxLines }),
    reader,
    tokens: new Tokens(deps.stores.meta, clock),
    browserSessions: new BrowserSessions(deps.stores.meta, clock),
    publicUrl: deps.publicUrl,
    uploads: new Uploads(deps.stores.blobs, limits.maxUploadBytes, clock),
    blobs: new Blobs(deps.stores.blobs),
    reading,
    pages: new SessionPages(reader, reading),
    // Loaded on first use: a cold start (an append) reads none of these modules.
    insights: lazyService(async () => new (await import("@pisync/core/insights")).Insights(deps.stores.meta)),
    identities: new Identities(deps.stores.meta),
    teams: teamStore
      ? lazyService(async () => {
          // A page's sessions share folders and names, members page through the same ones request
          // after request, and masking runs the whole secret rule set: each text is masked once
          // and kept (those being masked are shared, not masked again).
          const masked = new Memo<string>(4096, 8 * 1024 * 1024, (text) => text.length * 4);
          return new (await import("@pisync/core/teams")).Teams(teamStore, deps.stores.meta, clock, {
            moved: (teamId, owner, sessionId) => deps.search?.teams?.moved(teamId, owner, sessionId),
            maskText: (text) => masked.get(text, async () => (await loadViewer()).maskText(text).text),
          });
        })
      : undefined,
    limits,
    clock,
    work,
    // On the Node server, images are drawn on the share pool's threads, never on the event loop.
    preview: deps.preview ?? work.renderPreview,
  };
  const app = new Hono<AuthEnv>();
  app.onError((error, c) => onError(error, c, deps.log));
  if (deps.bufferResponses) app.use(readWhole);
  if (deps.rateLimits) app.use(...rateLimits(deps.rateLimits.limits, deps.rateLimits.clientIp));
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    if (wantsHtml(c)) return htmlError(c, 404, "There is nothing at this address.");
    return c.json(
      { error: `no route ${c.req.method} ${redact(path)}`, code: "route_not_found" } satisfies ErrorBody,
      404,
    );
  });
  app.get("/healthz", (c) => c.json({ ok: true }));
  // Built on its first request: a cold start does not turn every route's schemas into JSON Schema.
  app.get("/openapi.json", async (c) => c.json((await import("./openapi.js")).openApiDocument));
  const shares = new Shares(
    deps.stores.meta,
    deps.shareKeys ??
      (async () => {
        throw new Error("share links are not configured on this server");
      }),
    clock,
    { ...DEFAULT_SHARE_LIMITS, maxSeconds: (deps.maxShareDays ?? 90) * 86400 },
    services.teams,
  );
  app.use("/s/*", viewerLoaded);
  app.route("/s", sharePageRoutes(services, shares));
  // Signing in: one-time links (asked for with a token), browser sessions, the devices page.
  app.route("/", signInRoutes(services));
  app.route("/", deviceRoutes(services));
  // A machine signing in from the browser has no token yet: these come before the bearer check.
  const deviceCodes = lazyService(
    async () => new (await import("@pisync/core/device-codes")).DeviceCodes(deps.stores.meta, services.tokens, clock),
  );
  app.route("/", devicePageRoutes(services, deviceCodes));
  app.route("/v1/device", deviceCodeRoutes(services, deviceCodes));
  app.use("/v1/*", bearerAuth(services.tokens));
  app.route("/v1/login-links", loginLinkRoutes(services));
  // MCP's Streamable HTTP transport, stateless: the same tools as `pisync mcp`.
  app.use("/mcp", bearerAuth(services.tokens));
  app.route("/mcp", mcpRoutes(services, deps.search));
  app.route("/v1/sessions", createShareRoute(services, shares));
  app.route("/v1/shares", shareRoutes(services, shares));
  app.route("/v1/blobs", blobRoutes(services));
  if (deps.search) app.use("/v1/sessions/:id", indexAfterWrites(deps.search.indexer, deps.search.teams));
  if (deps.search) app.route("/v1/search", searchRoutes(deps.search, clock, services.teams));
  if (services.teams) {
    app.use("/v1/sessions/:id", leaveTeamOnDelete(services.teams));
    app.route("/v1/teams", teamRoutes(services, services.teams));
    app.route("/v1/join", joinRoutes(services.teams));
    app.route("/v1/sessions", sessionTeamRoutes(services.teams));
  }
  app.route("/v1/sessions", sessionRoutes(services));
  app.route("/v1/uploads", uploadRoutes(services));
  app.route("/v1/tokens", tokenRoutes(services));
  app.route("/v1/whoami", whoamiRoutes(services));
  app.route("/v1/insights", insightsRoutes(services));
  if (services.teams) app.route("/", teamPageRoutes(services, services.teams, deps.search));
  // The signed-in library's pages (sessions, one session, shares) and their assets.
  app.route(
    "/",
    libraryRoutes(services, {
      library: new Library(deps.stores.meta, services.reader, services.reading),
      shares,
      search: deps.search,
    }),
  );
  return app;
}

export type App = ReturnType<typeof createApp>;

/** Statuses whose answers carry no body. */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * Reads the answer's body whole inside the app (not a HEAD's, which is dropped): what fails while
 * it is read goes to `onError`, whose answer then carries none of the failed one's headers (Hono
 * copies them over: a download's name, an ETag, cookies, a Content-Encoding).
 */
const readWhole: MiddlewareHandler = async (c, next) => {
  await next();
  const response = c.res;
  if (c.req.method === "HEAD" || !response.body || NO_BODY.has(response.status)) return;
  try {
    c.res = new Response(await response.arrayBuffer(), response);
  } catch (error) {
    const names: string[] = [];
    response.headers.forEach((_, name) => {
      names.push(name);
    });
    for (const name of names) response.headers.delete(name);
    throw error;
  }
};
