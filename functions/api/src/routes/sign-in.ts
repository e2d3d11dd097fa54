/**
 * Signing a browser in and out: `POST /v1/login-links` (a device token asks for a one-time
 * link), `GET /login/:secret` (the link sets the session cookie; from another site's page,
 * only after a confirming `POST /login/:secret`), `POST /logout` and
 * `POST /logout-all`.
 */
import { Forbidden, Gone, NotFound } from "@pisync/core";
import { CreateLoginLink, LOGIN_SECRET } from "@pisync/protocol";
import type { Context } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import { LIBRARY_SECURITY_HEADERS, wantsHtml } from "../html.js";
import { fromThisOrigin, isHttps, type LibraryEnv, publicOrigin, SESSION_COOKIE, signedIn } from "../library-auth.js";
import { libraryPages } from "../library-pages.js";
import type { Services } from "../services.js";
import { parseJson } from "../validate.js";

/** The cookie outlives any session: the server's 30-day idle rule is what ends one. */
const COOKIE_MAX_AGE_SECONDS = 400 * 24 * 3600;

function withLibraryHeaders(c: Context): void {
  for (const [name, value] of Object.entries(LIBRARY_SECURITY_HEADERS)) c.header(name, value);
}

/** Removes the session cookie (with the attributes it was set with). */
export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure: isHttps(c), httpOnly: true, sameSite: "Strict" });
}

/** `/v1/login-links`: a one-time sign-in link for the token's user. */
export function loginLinkRoutes(services: Services) {
  const app = new Hono<AuthEnv>();
  app.post("/", async (c) => {
    const { next } = await parseJson(CreateLoginLink, c);
    const link = await services.browserSessions.createLoginLink(c.get("userId"), next);
    const url = `${publicOrigin(c, services.publicUrl)}/login/${link.secret}`;
    c.header("Cache-Control", "no-store");
    return c.json({ url, expiresAt: link.expiresAt }, 201);
  });
  return app;
}

/** `GET` and `POST /login/:secret`, `POST /logout`, `POST /logout-all`. */
export function signInRoutes(services: Services) {
  const app = new Hono<LibraryEnv>();
  /** Redeems the link: sets the session cookie and goes on to `next` (a page for a refused link). */
  const redeem = async (c: Context) => {
    withLibraryHeaders(c);
    // The link's URL is a secret: no referrer at all from here.
    c.header("Referrer-Policy", "no-referrer");
    let signedInBrowser: Awaited<ReturnType<typeof services.browserSessions.redeem>>;
    try {
      signedInBrowser = await services.browserSessions.redeem(c.req.param("secret") ?? "", c.req.header("User-Agent"));
    } catch (error) {
      if (!(error instanceof NotFound || error instanceof Gone) || !wantsHtml(c)) throw error;
      return c.html(
        (await libraryPages()).renderLinkRefused(error instanceof Gone ? "expired" : "unknown"),
        error instanceof Gone ? 410 : 404,
      );
    }
    setCookie(c, SESSION_COOKIE, signedInBrowser.secret, {
      path: "/",
      httpOnly: true,
      sameSite: "Strict",
      secure: isHttps(c),
      maxAge: COOKIE_MAX_AGE_SECONDS,
    });
    return c.redirect(signedInBrowser.next, 303);
  };
  app.get("/login/:secret", async (c) => {
    // Login CSRF: another site's page (or a sibling subdomain's) could navigate a victim to a
    // link its owner asked for, signing the victim into the owner's account. Such a link
    // signs in only from a POST of this page, which no other site can make for the person.
    const site = c.req.header("Sec-Fetch-Site");
    if ((site === "cross-site" || site === "same-site") && LOGIN_SECRET.test(c.req.param("secret"))) {
      withLibraryHeaders(c);
      // Kept within this origin (it has the link in it), so the form's POST carries our Origin.
      c.header("Referrer-Policy", "same-origin");
      return c.html((await libraryPages()).renderConfirmSignIn(new URL(c.req.url).pathname));
    }
    // Typed, opened by `pisync open`, or from this site: signed in at once.
    return redeem(c);
  });
  app.post("/login/:secret", async (c) => {
    if (!fromThisOrigin(c, services.publicUrl)) {
      throw new Forbidden("signing in must be confirmed on this server's page");
    }
    return redeem(c);
  });
  app.post("/logout", signedIn(services), async (c) => {
    const { browserId } = c.get("signedInWith");
    if (browserId) await services.browserSessions.revoke(c.get("userId"), browserId);
    clearSessionCookie(c);
    return c.redirect("/", 303);
  });
  app.post("/logout-all", signedIn(services), async (c) => {
    await services.browserSessions.revokeAll(c.get("userId"));
    clearSessionCookie(c);
    return c.redirect("/", 303);
  });
  return app;
}
