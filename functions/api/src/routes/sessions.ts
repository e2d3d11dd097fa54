/**
 * /v1/sessions: the append protocol (HEAD, PATCH, PUT, large-line uploads) and the reads.
 * Protocol rules are quoted next to the code in @pisync/core's append.ts.
 */
import { BadRequest, NotFound, OffsetConflict, uploadKey, viewOf } from "@pisync/core";
import { NotFoundError } from "@pisync/store";
import { Hono } from "hono";
import * as z from "zod/mini";
import type { Services } from "../app.js";
import type { AuthEnv } from "../auth.js";
import { DICT_BYTES, readBody } from "../body.js";
import { contextJson, textStream } from "../stream.js";
import { parseQuery } from "../validate.js";
import { rawResponse } from "./raw.js";
import { newUploadId, UPLOAD_ID } from "./uploads.js";

/** `Upload-Offset`: a non-negative decimal integer, nothing else. */
function uploadOffset(value: string | undefined, required: boolean): number | undefined {
  if (value === undefined) {
    if (required) throw new BadRequest("the Upload-Offset header is required");
    return undefined;
  }
  if (!/^\d{1,15}$/.test(value.trim())) throw new BadRequest("Upload-Offset must be a non-negative integer");
  return Number(value.trim());
}

/** `If-Match: "<generation>"`. */
function ifMatch(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(value);
  if (!match) throw new BadRequest('If-Match must name a generation, like "3"');
  return Number(match[1]);
}

const ListQuery = z.object({
  limit: z.optional(z.pipe(z.string().check(z.regex(/^\d{1,3}$/)), z.transform(Number))),
  cursor: z.optional(z.string().check(z.maxLength(2048))),
});
const ContextQuery = z.object({ leaf: z.optional(z.string().check(z.minLength(1), z.maxLength(256))) });
const RawQuery = z.object({
  generation: z.optional(z.pipe(z.string().check(z.regex(/^\d{1,9}$/)), z.transform(Number))),
});
const UploadRequest = z.object({
  length: z.number().check(z.int(), z.positive()),
});

export function sessionRoutes(services: Services) {
  const { appender, reader, stores, limits } = services;
  const app = new Hono<AuthEnv>();

  const write = (replace: boolean) => async (c: import("hono").Context<AuthEnv>) => {
    const userId = c.get("userId");
    const sessionId = c.req.param("id") as string;
    const offset = uploadOffset(c.req.header("Upload-Offset"), !replace) ?? 0;
    const generation = ifMatch(c.req.header("If-Match"));
    const uploadId = c.req.header("Pisync-Upload");
    let body: Uint8Array;
    if (uploadId !== undefined) {
      // A large line uploaded beforehand (see POST /:id/uploads): the request itself is empty.
      if (!UPLOAD_ID.test(uploadId)) throw new BadRequest("Pisync-Upload must be an upload id");
      try {
        body = await stores.blobs.get(uploadKey(userId, uploadId));
      } catch (error) {
        if (error instanceof NotFoundError) throw new NotFound("no such upload (it may have expired)");
        throw error;
      }
    } else {
      // The dictionary encoding decompresses against the committed bytes before the offset.
      body = await readBody(c, limits, async () => {
        if (offset === 0) return new Uint8Array(0);
        const status = await appender.status(userId, sessionId).catch(() => ({ offset: 0, generation: 0 }));
        if (offset > status.offset) throw new OffsetConflict(status.offset, status.generation);
        return (await reader.raw(userId, sessionId, { start: Math.max(0, offset - DICT_BYTES), end: offset })).bytes;
      });
    }
    const result = await appender.append({ userId, sessionId, offset, body, generation, replace });
    if (uploadId !== undefined) await stores.blobs.delete([uploadKey(userId, uploadId)]).catch(() => {});
    c.header("Upload-Offset", String(result.offset));
    c.header("ETag", `"${result.generation}"`);
    return c.json({
      length: result.length,
      offset: result.offset,
      generation: result.generation,
      entries: result.entries,
      leafId: result.leafId,
      retry: result.retry,
      problems: result.problems,
    });
  };
  app.patch("/:id", write(false));
  app.put("/:id", write(true));

  app.post("/:id/uploads", async (c) => {
    const userId = c.get("userId");
    await appender.status(userId, c.req.param("id")).catch((error) => {
      // A large line may be the session's first: only a malformed id is refused here.
      if (!(error instanceof NotFound)) throw error;
    });
    const request = UploadRequest.safeParse(await c.req.json().catch(() => undefined));
    if (!request.success) throw new BadRequest("the body must be JSON: { length: bytes }");
    if (request.data.length > limits.maxUploadBytes) {
      throw new BadRequest(`an upload is at most ${limits.maxUploadBytes} bytes`);
    }
    const uploadId = newUploadId();
    const expiresIn = 900;
    const presigned = await stores.blobs.uploadUrl(uploadKey(userId, uploadId), expiresIn, request.data.length);
    const url = presigned ?? new URL(`/v1/uploads/${uploadId}`, c.req.url).toString();
    return c.json(
      {
        uploadId,
        url,
        method: "PUT",
        // Send the bearer token only to this API, never to a presigned storage URL.
        authorization: presigned === undefined,
        expiresAt: new Date(services.clock().getTime() + expiresIn * 1000).toISOString(),
      },
      201,
    );
  });

  app.get("/", async (c) => {
    const query = parseQuery(ListQuery, c);
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 100);
    return c.json(await reader.list(c.get("userId"), { limit, cursor: query.cursor }));
  });

  // GET and HEAD (Hono answers HEAD with the GET route, without its body): the metadata, with
  // tus's `Upload-Offset` (committed bytes) and the generation as `ETag`.
  app.get("/:id", async (c) => {
    const head = await reader.head(c.get("userId"), c.req.param("id"));
    c.header("Upload-Offset", String(head.current.length));
    c.header("ETag", `"${head.current.generation}"`);
    c.header("Cache-Control", "no-store");
    return c.json(viewOf(head));
  });

  app.get("/:id/generations", async (c) => {
    const generations = await reader.generations(c.get("userId"), c.req.param("id"));
    return c.json({
      generations: generations.map((g) => ({
        generation: g.generation,
        bytes: g.length,
        lines: g.lines,
        createdAt: g.createdAt,
        reason: g.reason,
      })),
    });
  });

  app.get("/:id/raw", async (c) => {
    const query = parseQuery(RawQuery, c);
    return rawResponse(c, reader, c.get("userId"), c.req.param("id"), query.generation);
  });

  app.get("/:id/tree", async (c) => c.json(await reader.tree(c.get("userId"), c.req.param("id"))));

  app.get("/:id/context", async (c) => {
    const query = parseQuery(ContextQuery, c);
    // Streamed a batch of entries at a time: memory does not grow with the session.
    const { messages, settings } = await reader.contextStream(c.get("userId"), c.req.param("id"), query.leaf);
    c.header("Content-Type", "application/json");
    return c.body(textStream(contextJson(messages, settings)));
  });

  app.delete("/:id", async (c) => {
    await reader.delete(c.get("userId"), c.req.param("id"), services.clock());
    return c.body(null, 204);
  });

  return app;
}
