import { LOGIN_SECRET } from "../ids.js";
import { error, form, html, libraryErrors, type RouteSpec } from "./common.js";

/** Signing a browser in and out. */
export const SIGN_IN_ROUTES: readonly RouteSpec[] = [
  {
    method: "get",
    path: "/login/:secret",
    summary: "Redeem a sign-in link: sets the HttpOnly, SameSite=Strict session cookie and redirects (303) to its next",
    auth: "link",
    params: { secret: LOGIN_SECRET },
    responses: {
      200: {
        description:
          "opened from another site's page (Sec-Fetch-Site: cross-site or same-site): nothing is signed in (login CSRF); a page asks to confirm with POST /login/:secret",
        content: html,
      },
      303: { description: "signed in; Set-Cookie pisync_session and Location" },
      404: { description: "unknown or already used (a page for a browser)", content: html },
      410: { description: "expired (a page for a browser)", content: html },
    },
  },
  {
    method: "post",
    path: "/login/:secret",
    summary: "Confirm a sign-in link opened from another site's page (the button of its page, from this origin only)",
    auth: "link",
    params: { secret: LOGIN_SECRET },
    responses: {
      303: { description: "signed in; Set-Cookie pisync_session and Location" },
      403: error("not posted from this server's page (Origin)", "csrf_rejected"),
      404: { description: "unknown or already used (a page for a browser)", content: html },
      410: { description: "expired (a page for a browser)", content: html },
    },
  },
  {
    method: "post",
    path: "/logout",
    summary: "Sign this browser out",
    auth: "library",
    body: form,
    responses: { 303: { description: "signed out; to /" }, ...libraryErrors },
  },
  {
    method: "post",
    path: "/logout-all",
    summary: "Sign out every browser session of mine (tokens stay)",
    auth: "library",
    body: form,
    responses: { 303: { description: "signed out everywhere; to /" }, ...libraryErrors },
  },
];
