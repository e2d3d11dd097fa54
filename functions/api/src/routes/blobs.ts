/**
 * /v1/blobs/:hash: content-addressed blobs (oh-my-pi's images); `@pisync/core`'s `Blobs` holds
 * the rules, this only translates HTTP.
 */
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import { readBody } from "../body.js";
import type { Services } from "../services.js";

/** GET (and HEAD, which Hono answers with it) and PUT of one blob. */
export function blobRoutes(services: Services) {
  const { blobs, limits } = services;
  const app = new Hono<AuthEnv>();

  app.get("/:hash", async (c) => {
    const bytes = await blobs.get(c.get("userId"), c.req.param("hash"));
    c.header("Content-Type", "application/octet-stream");
    c.header("Cache-Control", "private, max-age=31536000, immutable");
    return c.body(bytes as Uint8Array<ArrayBuffer>);
  });

  app.put("/:hash", async (c) => {
    const body = await readBody(c, { maxRequestBytes: limits.maxRequestBytes, maxBodyBytes: limits.maxBodyBytes });
    await blobs.put(c.get("userId"), c.req.param("hash"), body);
    return c.body(null, 204);
  });

  return app;
}
