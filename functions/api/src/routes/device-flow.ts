/**
 * Signing a machine in from the browser (RFC 8628's shape): `POST /v1/device/code` and
 * `POST /v1/device/token` for the machine (no credential: the device code is its secret), and
 * the library's `/device` page, where the signed-in owner confirms the code and approves or
 * denies it (`POST /device/approve`, `POST /device/deny`, CSRF as every page).
 */
import { type DeviceCodes, NotFound, TooMany } from "@pisync/core";
import { PollDeviceCode, StartDeviceCode } from "@pisync/protocol";
import type { Context } from "hono";
import { Hono } from "hono/quick";
import * as z from "zod/mini";
import { LIBRARY_SECURITY_HEADERS } from "../html.js";
import { type LibraryEnv, publicOrigin, signedIn } from "../library-auth.js";
import { libraryPages } from "../library-pages.js";
import type { Services } from "../services.js";
import { parseForm, parseJson, parseQuery } from "../validate.js";

/** `/device?code=`: the code as the person typed it (or the CLI's link carried it). */
const DeviceQuery = z.object({ code: z.optional(z.string().check(z.maxLength(64))) });
/** The approve and deny forms. */
const DecisionForm = z.object({ code: z.string().check(z.maxLength(64)), csrf: z.optional(z.string()) });

/** `POST /v1/device/code` and `POST /v1/device/token`: what the machine asks, without a credential. */
export function deviceCodeRoutes(services: Services, codes: DeviceCodes) {
  const app = new Hono();
  app.post("/code", async (c) => {
    const { name } = await parseJson(StartDeviceCode, c);
    const started = await codes.start(name);
    const page = `${publicOrigin(c, services.publicUrl)}/device`;
    c.header("Cache-Control", "no-store");
    return c.json({
      device_code: started.deviceCode,
      user_code: started.userCode,
      verification_uri: page,
      verification_uri_complete: `${page}?code=${encodeURIComponent(started.userCode)}`,
      expires_in: started.expiresIn,
      interval: started.interval,
    });
  });
  app.post("/token", async (c) => {
    const { device_code } = await parseJson(PollDeviceCode, c);
    const { token, tokenId, name } = await codes.poll(device_code);
    c.header("Cache-Control", "no-store");
    return c.json({ token, id: tokenId, name });
  });
  return app;
}

/** `/device` and its two forms, behind {@link signedIn}. */
export function devicePageRoutes(services: Services, codes: DeviceCodes) {
  const app = new Hono<LibraryEnv>();
  app.use("/device", signedIn(services));
  app.use("/device/*", signedIn(services));
  const page = async (c: Context<LibraryEnv>, status: 200 | 404 | 429, input: Parameters<DevicePage>[0]) => {
    for (const [name, value] of Object.entries(LIBRARY_SECURITY_HEADERS)) c.header(name, value);
    c.header("Cache-Control", "no-store");
    return c.html((await libraryPages()).renderDevicePage({ ...input, csrfToken: c.get("csrfToken") }), status);
  };
  /** The page for a refused code (unknown, expired, used; too many guesses): the form again, and why. */
  const refused = (c: Context<LibraryEnv>, typed: string, error: unknown) => {
    if (error instanceof TooMany) {
      c.header("Retry-After", String(error.retryAfter));
      return page(c, 429, { step: "enter", typed, problem: error.message });
    }
    if (error instanceof NotFound) return page(c, 404, { step: "enter", typed, problem: error.message });
    throw error;
  };
  app.get("/device", async (c) => {
    const { code } = parseQuery(DeviceQuery, c);
    if (!code) return page(c, 200, { step: "enter" });
    try {
      return page(c, 200, { step: "confirm", code: await codes.pending(c.get("userId"), code) });
    } catch (error) {
      return refused(c, code, error);
    }
  });
  for (const decision of ["approve", "deny"] as const) {
    app.post(`/device/${decision}`, async (c) => {
      const { code } = await parseForm(DecisionForm, c);
      try {
        const decided = await codes[decision](c.get("userId"), code);
        return page(c, 200, { step: decision === "approve" ? "approved" : "denied", code: decided });
      } catch (error) {
        return refused(c, code, error);
      }
    });
  }
  return app;
}

type DevicePage = Awaited<ReturnType<typeof libraryPages>>["renderDevicePage"];
