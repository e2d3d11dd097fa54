/**
 * /v1/blobs/:sha256: content-addressed blobs, for oh-my-pi's images (it keeps them outside the
 * session file in `<agent>/blobs/<sha256>` and writes `blob:sha256:<hex>` in the entries). Each
 * user has their own namespace: a hash never tells whether someone else holds that content.
 */
import { createHash } from "node:crypto";
import { BadRequest, blobKey, NotFound } from "@pisync/core";
import { NotFoundError } from "@pisync/store";
import { Hono } from "hono";
import type { Services } from "../app.js";
import type { AuthEnv } from "../auth.js";
import { readBody } from "../body.js";

const SHA256 = /^[a-f0-9]{64}$/;

export function blobRoutes(services: Services) {
  const { stores, limits } = services;
  const app = new Hono<AuthEnv>();

  function hashOf(param: string): string {
    if (!SHA256.test(param)) throw new BadRequest("a blob is named by the hex SHA-256 of its bytes");
    return param;
  }

  // GET, and HEAD (Hono answers HEAD with this route, without the body): is it here?
  app.get("/:hash", async (c) => {
    const hash = hashOf(c.req.param("hash"));
    try {
      const bytes = await stores.blobs.get(blobKey(c.get("userId"), hash));
      c.header("Content-Type", "application/octet-stream");
      c.header("Cache-Control", "private, max-age=31536000, immutable");
      return c.body(bytes as Uint8Array<ArrayBuffer>);
    } catch (error) {
      if (error instanceof NotFoundError) throw new NotFound("no such blob");
      throw error;
    }
  });

  app.put("/:hash", async (c) => {
    const hash = hashOf(c.req.param("hash"));
    const body = await readBody(c, { maxRequestBytes: limits.maxRequestBytes, maxBodyBytes: limits.maxBodyBytes });
    if (createHash("sha256").update(body).digest("hex") !== hash) {
      throw new BadRequest("the body's SHA-256 is not the blob's name");
    }
    await stores.blobs.put(blobKey(c.get("userId"), hash), body);
    return c.body(null, 204);
  });

  return app;
}
