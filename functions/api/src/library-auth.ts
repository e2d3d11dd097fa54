/**
 * Who is reading the library pages. A page request is signed in by a browser session cookie
 * (set by a one-time sign-in link) or by a device token in `Authorization: Bearer`; changes made
 * from a browser session must also pass the CSRF check.
 *
 * TEMPORARY SCAFFOLD: this version accepts bearer tokens only; the browser-session version
 * replaces its body with the same exported names and types.
 */
import { Unauthorized } from "@pisync/core";
import { createMiddleware } from "hono/factory";
import type { Services } from "./app.js";

/** What library routes can read after {@link signedIn}. */
export type LibraryEnv = {
  Variables: {
    userId: string;
    /** The browser session's CSRF token (pages write it into their forms); absent for bearer tokens. */
    csrfToken: string | undefined;
  };
};

/**
 * Middleware for library pages and their form posts: sets `userId` (and `csrfToken`) or throws
 * `Unauthorized` (a browser gets the sign-in hint page). State-changing requests made with a
 * browser session must come from this origin and carry the CSRF token (`csrf` form field or
 * `X-CSRF-Token` header).
 */
export function signedIn(services: Services) {
  return createMiddleware<LibraryEnv>(async (c, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("Authorization") ?? "");
    if (!match) throw new Unauthorized("sign in first");
    const record = await services.tokens.authenticate(match[1]);
    c.set("userId", record.userId);
    c.set("csrfToken", undefined);
    await next();
  });
}
