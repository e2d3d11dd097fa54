/**
 * The devices page and its forms: `GET /devices` (tokens and browser sessions with their last
 * use), `POST /devices/tokens` (a new token, shown once), `POST /devices/tokens/:id/rename`,
 * `POST /devices/tokens/:id/revoke`, `POST /devices/sessions/:id/revoke`.
 */
import { BadRequest, DEVICES_PAGE, NotFound } from "@pisync/core";
import { DEVICE_ID } from "@pisync/protocol";
import type { MintedToken } from "@pisync/viewer/library";
import type { Context } from "hono";
import { Hono } from "hono/quick";
import * as z from "zod/mini";
import { LIBRARY_SECURITY_HEADERS } from "../html.js";
import { type LibraryEnv, signedIn } from "../library-auth.js";
import { libraryPages } from "../library-pages.js";
import type { Services } from "../services.js";
import { parseForm, parseQuery } from "../validate.js";
import { clearSessionCookie } from "./sign-in.js";

/** `/devices?cursor=`: the next page's cursor, as the previous page gave it. */
const DevicesQuery = z.object({ cursor: z.optional(z.string().check(z.maxLength(2000))) });

/** The new-token and rename forms: a name of 1 to 100 characters. */
const NameForm = z.object({
  name: z.pipe(
    z.string(),
    z.transform((v: string) => v.trim()),
  ),
  csrf: z.optional(z.string()),
});

/** A form's name, trimmed and checked. @throws BadRequest */
function nameOf(name: string): string {
  if (name.length < 1 || name.length > 100) throw new BadRequest("a name has 1 to 100 characters", "bad_request");
  return name;
}

/** A device id from the path; anything else is missing, like another user's. */
function deviceId(id: string, what: string): string {
  if (!DEVICE_ID.test(id)) throw new NotFound(`no such ${what}`);
  return id;
}

/** `/devices` and its revoke forms, behind {@link signedIn} (and its CSRF check). */
export function deviceRoutes(services: Services) {
  const app = new Hono<LibraryEnv>();
  app.use("/devices", signedIn(services));
  app.use("/devices/*", signedIn(services));
  /** The devices page (its first page, with a token just made shown once, when there is one). */
  const devicesPage = async (c: Context<LibraryEnv>, cursor: string | undefined, minted?: MintedToken) => {
    const page = await services.browserSessions.devices(c.get("userId"), c.get("signedInWith"), {
      limit: DEVICES_PAGE,
      cursor,
    });
    for (const [name, value] of Object.entries(LIBRARY_SECURITY_HEADERS)) c.header(name, value);
    if (minted) c.header("Cache-Control", "no-store");
    const next = page.cursor ? `/devices?cursor=${encodeURIComponent(page.cursor)}` : undefined;
    return c.html(
      (await libraryPages()).renderDevicesPage({ devices: page.devices, csrfToken: c.get("csrfToken"), next, minted }),
    );
  };
  app.get("/devices", async (c) => devicesPage(c, parseQuery(DevicesQuery, c).cursor));
  app.post("/devices/tokens", async (c) => {
    const name = nameOf((await parseForm(NameForm, c)).name);
    const { token, record } = await services.tokens.mint(c.get("userId"), name);
    return devicesPage(c, undefined, { id: record.id, name: record.name, token });
  });
  app.post("/devices/tokens/:id/rename", async (c) => {
    const id = deviceId(c.req.param("id"), "token");
    const name = nameOf((await parseForm(NameForm, c)).name);
    if (!(await services.tokens.rename(c.get("userId"), id, name))) throw new NotFound("no such token");
    return c.redirect("/devices", 303);
  });
  app.post("/devices/tokens/:id/revoke", async (c) => {
    const id = deviceId(c.req.param("id"), "token");
    if (!(await services.tokens.revoke(c.get("userId"), id))) throw new NotFound("no such token");
    return c.redirect("/devices", 303);
  });
  app.post("/devices/sessions/:id/revoke", async (c) => {
    const id = deviceId(c.req.param("id"), "browser session");
    if (!(await services.browserSessions.revoke(c.get("userId"), id))) throw new NotFound("no such browser session");
    if (id !== c.get("signedInWith").browserId) return c.redirect("/devices", 303);
    clearSessionCookie(c);
    return c.redirect("/", 303);
  });
  return app;
}
