/**
 * /v1/uploads/:id: where a large line goes when the store has no presigned URL (the embedded
 * store). On AWS the client PUTs straight to S3 instead, past Lambda's 6 MB request limit.
 */
import { randomBytes } from "node:crypto";
import { BadRequest, uploadKey } from "@pisync/core";
import { Hono } from "hono";
import type { Services } from "../app.js";
import type { AuthEnv } from "../auth.js";
import { readBody } from "../body.js";

export const UPLOAD_ID = /^[a-f0-9]{32}$/;

export function newUploadId(): string {
  return randomBytes(16).toString("hex");
}

export function uploadRoutes(services: Services) {
  const app = new Hono<AuthEnv>();
  app.put("/:uploadId", async (c) => {
    const uploadId = c.req.param("uploadId");
    if (!UPLOAD_ID.test(uploadId)) throw new BadRequest("not an upload id");
    const max = services.limits.maxUploadBytes;
    const body = await readBody(c, { maxRequestBytes: max, maxBodyBytes: max });
    await services.stores.blobs.put(uploadKey(c.get("userId"), uploadId), body);
    return c.body(null, 204);
  });
  return app;
}
