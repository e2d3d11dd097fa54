/**
 * The devices page and its forms: `GET /devices` (tokens and browser sessions with their last
 * use), `POST /devices/tokens/:id/revoke`, `POST /devices/sessions/:id/revoke`.
 */
import { DEVICES_PAGE, NotFound } from "@pisync/core";
import { DEVICE_ID } from "@pisync/protocol";
import { Hono } from "hono";
import * as z from "zod/mini";
import type { Services } from "../app.js";
import { LIBRARY_SECURITY_HEADERS } from "../html.js";
import { type LibraryEnv, signedIn } from "../library-auth.js";
import { libraryPages } from "../library-pages.js";
import { parseQuery } from "../validate.js";
import { clearSessionCookie } from "./sign-in.js";

/** `/devices?cursor=`: the next page's cursor, as the previous page gave it. */
const DevicesQuery = z.object({ cursor: z.optional(z.string().check(z.maxLength(2000))) });

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
  app.get("/devices", async (c) => {
    const { cursor } = parseQuery(DevicesQuery, c);
    const page = await services.browserSessions.devices(c.get("userId"), c.get("signedInWith"), {
      limit: DEVICES_PAGE,
      cursor,
    });
    for (const [name, value] of Object.entries(LIBRARY_SECURITY_HEADERS)) c.header(name, value);
    const next = page.cursor ? `/devices?cursor=${encodeURIComponent(page.cursor)}` : undefined;
    return c.html(
      (await libraryPages()).renderDevicesPage({ devices: page.devices, csrfToken: c.get("csrfToken"), next }),
    );
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
