/**
 * Who is reading the library pages. A page request is signed in by a browser session cookie
 * (set by a one-time sign-in link) or by a device token in `Authorization: Bearer`; changes made
 * from a browser session must also pass the CSRF check: this server's `Origin` (or `Referer`),
 * and the session's CSRF token in the `csrf` form field or the `X-CSRF-Token` header.
 */
import { csrfMatches, Forbidden, TooLarge, Unauthorized } from "@pisync/core";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { LIBRARY_SECURITY_HEADERS, wantsHtml } from "./html.js";
import { libraryPages } from "./library-pages.js";
import { admit } from "./rate-limit.js";
import type { Services } from "./services.js";

/** The browser session cookie's name. */
export const SESSION_COOKIE = "pisync_session";

/** What library routes can read after {@link signedIn}. */
export type LibraryEnv = {
  Variables: {
    userId: string;
    /** The browser session's CSRF token (pages write it into their forms); absent for bearer tokens. */
    csrfToken: string | undefined;
    /** What the request was signed in with: a browser session's or a token's public id. */
    signedInWith: { browserId?: string; tokenId?: string };
  };
};

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** A library form is small; a bigger body is refused before it is parsed for its token. */
const MAX_FORM_BYTES = 1024 * 1024;

/** Whether the client reached us over HTTPS (directly, or behind a Lambda function URL or proxy). */
export function isHttps(c: Context): boolean {
  const forwarded = c.req.header("X-Forwarded-Proto")?.split(",")[0]?.trim().toLowerCase();
  return forwarded ? forwarded === "https" : new URL(c.req.url).protocol === "https:";
}

/** This server's origin as browsers see it: the configured public URL's, else the request's. */
export function publicOrigin(c: Context, publicUrl: string | undefined): string {
  if (publicUrl) return new URL(publicUrl).origin;
  const url = new URL(c.req.url);
  if (isHttps(c)) url.protocol = "https:";
  return url.origin;
}

/** The origin a request says it comes from: `Origin`, else `Referer`'s; undefined when neither says. */
function claimedOrigin(c: Context): string | undefined {
  const origin = c.req.header("Origin");
  if (origin) return origin; // "null" (an opaque origin) matches nothing
  const referer = c.req.header("Referer");
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return "null";
  }
}

/** Whether a request says it comes from a page of this server (`Origin`, else `Referer`). */
export function fromThisOrigin(c: Context, publicUrl: string | undefined): boolean {
  return claimedOrigin(c) === publicOrigin(c, publicUrl);
}

/**
 * Refuses (413) a body larger than a library form before anything reads it, whether its size
 * is declared or it comes in chunks: a form post is buffered whole to be parsed.
 */
export const formLimit = bodyLimit({
  maxSize: MAX_FORM_BYTES,
  onError: () => {
    throw new TooLarge("the form is too large");
  },
});

/** The CSRF token a request carries: the `X-CSRF-Token` header, else the form's `csrf` field. */
async function carriedCsrf(c: Context): Promise<string | undefined> {
  const header = c.req.header("X-CSRF-Token");
  if (header) return header;
  const type = c.req.header("Content-Type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type)) return undefined;
  // Hono keeps the parsed body: the route reads the same form again for free.
  const field = (await c.req.parseBody()).csrf;
  return typeof field === "string" ? field : undefined;
}

/**
 * Middleware for library pages and their form posts: sets `userId` (and `csrfToken`) or throws
 * `Unauthorized` (a browser gets the sign-in hint page). State-changing requests made with a
 * browser session must come from this origin and carry the CSRF token (`csrf` form field or
 * `X-CSRF-Token` header).
 */
export function signedIn(services: Services) {
  const check = createMiddleware<LibraryEnv>(async (c, next) => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("Authorization") ?? "");
    if (bearer) {
      // A bearer token is not sent by a browser on its own: no cross-site request carries it.
      const record = await services.tokens.authenticate(bearer[1]);
      c.set("userId", record.userId);
      c.set("csrfToken", undefined);
      c.set("signedInWith", { tokenId: record.id });
      admit(c, "token", record.id, record.userId);
      return next();
    }
    const secret = getCookie(c, SESSION_COOKIE);
    const browser = await services.browserSessions.authenticate(secret);
    if (!browser || !secret) {
      if (wantsHtml(c)) {
        for (const [name, value] of Object.entries(LIBRARY_SECURITY_HEADERS)) c.header(name, value);
        return c.html((await libraryPages()).renderSignInHint(), 401);
      }
      throw new Unauthorized("sign in first: a browser session (pisync open) or a bearer token");
    }
    if (STATE_CHANGING.has(c.req.method)) {
      if (!fromThisOrigin(c, services.publicUrl)) {
        throw new Forbidden("this change must come from a page of this server");
      }
      if (!csrfMatches(secret, await carriedCsrf(c))) {
        throw new Forbidden("this change needs the page's CSRF token (reload the page and try again)");
      }
    }
    c.set("userId", browser.record.userId);
    c.set("csrfToken", browser.csrfToken);
    c.set("signedInWith", { browserId: browser.record.id });
    admit(c, "token", `browser:${browser.record.id}`, browser.record.userId);
    await next();
  });
  // Bearer or cookie, a change's body is bounded before it is read (the route parses it too).
  return createMiddleware<LibraryEnv>(async (c, next) => {
    if (!STATE_CHANGING.has(c.req.method)) return check(c, next);
    await formLimit(c, async () => {
      const response = await check(c, next);
      if (response instanceof Response) c.res = response; // the sign-in hint page
    });
  });
}
