/**
 * /v1/sessions: the append protocol (HEAD, PATCH, PUT, large-line uploads) and the reads.
 * Protocol rules are quoted next to the code in @pisync/core's append.ts.
 */
import { BadRequest, boundedProblem, MAX_SLOT_BYTES, namedWriters, ownerView, viewOf } from "@pisync/core";
import {
  type AppendResponse,
  ContextQuery,
  CreateUpload,
  type DeleteReceipt,
  type GenerationList,
  HEADERS,
  ListSessionsQuery,
  RawQuery,
  ReadPageQuery,
  type RenameResponse,
  type SessionMeta,
  type UploadTicket,
} from "@pisync/protocol";
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import { readBody } from "../body.js";
import { markdownResponse } from "../markdown.js";
import type { Services } from "../services.js";
import { contextJson, textStream } from "../stream.js";
import { parseJson, parseQuery } from "../validate.js";
import { loadViewer } from "../viewer.js";
import { rawResponse } from "./raw.js";

/** `Upload-Offset`: a non-negative decimal integer, nothing else. */
function uploadOffset(value: string | undefined, required: boolean): number | undefined {
  if (value === undefined) {
    if (required) throw new BadRequest(`the ${HEADERS.uploadOffset} header is required`, "invalid_offset");
    return undefined;
  }
  if (!/^\d{1,15}$/.test(value.trim())) {
    throw new BadRequest(`${HEADERS.uploadOffset} must be a non-negative integer`, "invalid_offset");
  }
  return Number(value.trim());
}

/** `If-Match: "<generation>"`. */
function ifMatch(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(value);
  if (!match) throw new BadRequest('If-Match must name a generation, like "3"', "invalid_if_match");
  return Number(match[1]);
}

/** The /v1/sessions routes: each parses HTTP, calls one core use case and writes its answer. */
export function sessionRoutes(services: Services) {
  const { appender, reader, uploads, limits } = services;
  const app = new Hono<AuthEnv>();

  const write = (replace: boolean) => async (c: import("hono").Context<AuthEnv>) => {
    const userId = c.get("userId");
    const sessionId = c.req.param("id") as string;
    const offset = uploadOffset(c.req.header(HEADERS.uploadOffset), !replace) ?? 0;
    const generation = ifMatch(c.req.header("If-Match"));
    const uploadId = c.req.header(HEADERS.upload);
    // A large line uploaded beforehand (see POST /:id/uploads): the request itself is empty.
    // Otherwise the body, which the dictionary encoding decompresses against the committed bytes.
    const body =
      uploadId !== undefined
        ? await uploads.take(userId, uploadId, sessionId)
        : await readBody(c, limits, () => appender.dictionary(userId, sessionId, offset));
    const device = c.get("tokenId");
    const result = await appender.append({ userId, sessionId, offset, body, generation, replace, device });
    if (uploadId !== undefined) await uploads.discard(userId, uploadId);
    c.header(HEADERS.uploadOffset, String(result.offset));
    c.header("ETag", `"${result.generation}"`);
    return c.json({
      length: result.length,
      offset: result.offset,
      generation: result.generation,
      entries: result.entries,
      leafId: result.leafId,
      retry: result.retry,
      problems: result.problems.map(boundedProblem),
      ...(result.missingBlobs.length ? { missingBlobs: result.missingBlobs } : {}),
    } satisfies AppendResponse);
  };
  app.patch("/:id", write(false));
  app.put("/:id", write(true));

  // A rename: the title slot (the first line) replaced in place; the body is that line (see core's rename.ts).
  app.put("/:id/title", async (c) => {
    const generation = ifMatch(c.req.header("If-Match"));
    const body = await readBody(c, {
      ...limits,
      maxRequestBytes: Math.min(limits.maxRequestBytes, MAX_SLOT_BYTES * 2),
    });
    const result = await appender.rename({ userId: c.get("userId"), sessionId: c.req.param("id"), body, generation });
    c.header(HEADERS.uploadOffset, String(result.offset));
    c.header("ETag", `"${result.generation}"`);
    return c.json({
      offset: result.offset,
      generation: result.generation,
      retry: result.retry,
      ...(result.title !== undefined ? { title: result.title } : {}),
    } satisfies RenameResponse);
  });

  app.post("/:id/uploads", async (c) => {
    const { length, sha256 } = await parseJson(CreateUpload, c);
    const ticket = await uploads.create(c.get("userId"), c.req.param("id"), length, sha256);
    return c.json(
      {
        uploadId: ticket.uploadId,
        url: ticket.url ?? new URL(`/v1/uploads/${ticket.uploadId}`, c.req.url).toString(),
        method: "PUT",
        // Send the bearer token only to this API, never to a presigned storage URL.
        authorization: ticket.url === undefined,
        expiresAt: ticket.expiresAt,
      } satisfies UploadTicket,
      201,
    );
  });

  app.get("/", async (c) => {
    const query = parseQuery(ListSessionsQuery, c);
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 100);
    const userId = c.get("userId");
    // Each session names the machines (this user's devices) that wrote it.
    return c.json(await reader.list(userId, { limit, cursor: query.cursor }, () => services.tokens.list(userId)));
  });

  // GET and HEAD (Hono answers HEAD with the GET route, without its body): the metadata, with
  // tus's `Upload-Offset` (committed bytes) and the generation as `ETag`.
  app.get("/:id", async (c) => {
    const userId = c.get("userId");
    const head = await reader.head(userId, c.req.param("id"));
    // Devices named by this user's own tokens only.
    const writers = await namedWriters(head.current.writers, () => services.tokens.list(userId));
    c.header(HEADERS.uploadOffset, String(head.current.length));
    c.header("ETag", `"${head.current.generation}"`);
    c.header("Cache-Control", "no-store");
    return c.json({ ...viewOf(head), ...(writers ? { writers } : {}) } satisfies SessionMeta);
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
    } satisfies GenerationList);
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

  /** The branch to `?leaf=` as Markdown, as the owner sees it (unmasked); another user's session is missing. */
  app.get("/:id/md", async (c) => {
    const { leaf } = parseQuery(ContextQuery, c);
    const { share, head } = await ownerView(reader, c.get("userId"), c.req.param("id"));
    const doc = await services.reading.document(share, head, leaf);
    // Images kept as blobs link to the owner's own blob route (the same bearer token reads them).
    const blobs = `${services.publicUrl ?? new URL(c.req.url).origin}/v1/blobs/`;
    return markdownResponse(c, doc, ["your session, unmasked"], false, blobs);
  });

  /** One page (at most 64 KiB) of the branch as masked Markdown or of its context: what agents read. */
  app.get("/:id/page", async (c) => {
    const { view, leaf, cursor } = parseQuery(ReadPageQuery, c);
    // Masking a title made again from its entry runs synchronously: the viewer loaded first.
    await loadViewer();
    c.header("Cache-Control", "no-store");
    return c.json(await services.pages.page(c.get("userId"), c.req.param("id"), view, leaf, cursor));
  });

  // `Prefer: return=representation` (RFC 7240) asks for the receipt of what went; else 204.
  app.delete("/:id", async (c) => {
    const receipt = await reader.delete(c.get("userId"), c.req.param("id"), services.clock());
    const wanted = /(^|[,;\s])return=representation($|[,;\s])/i.test(c.req.header("Prefer") ?? "");
    if (!wanted) return c.body(null, 204);
    return c.json({ ...receipt } satisfies DeleteReceipt);
  });

  return app;
}
