/**
 * /v1/uploads/:uploadId: where a large line goes when the store has no presigned URL (the
 * embedded store). On AWS the client PUTs straight to S3 instead, past Lambda's 6 MB request limit.
 */
import { UnsupportedMediaType } from "@pisync/core";
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import { readBody } from "../body.js";
import type { Services } from "../services.js";

/** PUT of an upload's bytes. */
export function uploadRoutes(services: Services) {
  const { uploads } = services;
  const app = new Hono<AuthEnv>();
  app.put("/:uploadId", async (c) => {
    // The bytes as they are (as S3's presigned PUT takes them): a compressed body would let a few
    // bytes sent keep a ticket's worth of storage.
    const encoding = (c.req.header("Content-Encoding") ?? "identity").trim().toLowerCase();
    if (encoding !== "identity" && encoding !== "") {
      throw new UnsupportedMediaType(
        `an upload is sent as it is, without Content-Encoding (${encoding} is refused): nothing was kept`,
        "upload_encoding",
      );
    }
    // Only a ticket's upload is taken, and no byte past its declared length is read.
    const max = await uploads.expectedLength(c.get("userId"), c.req.param("uploadId"));
    const body = await readBody(c, { maxRequestBytes: max, maxBodyBytes: max });
    await uploads.put(c.get("userId"), c.req.param("uploadId"), body);
    return c.body(null, 204);
  });
  return app;
}
