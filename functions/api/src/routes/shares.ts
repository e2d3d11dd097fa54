/** Share management, for the session's owner: create, list, revoke. */
import { NotFound, type Shares } from "@pisync/core";
import type { ShareRecord } from "@pisync/store";
import { Hono } from "hono";
import * as z from "zod/mini";
import type { Services } from "../app.js";
import type { AuthEnv } from "../auth.js";
import { parseJson } from "../validate.js";

const CreateShare = z.object({
  leafId: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  expiresIn: z.optional(z.number().check(z.int(), z.positive())),
  maskSecrets: z.optional(z.boolean()),
});

async function view(shares: Shares, share: ShareRecord, origin: string) {
  return {
    id: share.id,
    sessionId: share.sessionId,
    leafId: share.leafId ?? null,
    url: `${origin}/s/${await shares.tokenOf(share.id)}`,
    createdAt: share.createdAt,
    expiresAt: share.expiresAt,
    revokedAt: share.revokedAt ?? null,
    maskSecrets: share.maskSecrets,
    status: shares.statusOf(share),
  };
}

/** POST /v1/sessions/:id/shares */
export function createShareRoute(services: Services, shares: Shares) {
  const app = new Hono<AuthEnv>();
  app.post("/:id/shares", async (c) => {
    const userId = c.get("userId");
    const sessionId = c.req.param("id");
    const body = await parseJson(CreateShare, c);
    const head = await services.reader.head(userId, sessionId);
    if (body.leafId !== undefined) {
      const { index } = await services.reader.index(head, head.current);
      if (!index.byId(body.leafId)) throw new NotFound(`no entry ${body.leafId} in this session`);
    }
    const { share } = await shares.create({ userId, sessionId, sessionCreatedAt: head.createdAt, ...body });
    return c.json(await view(shares, share, new URL(c.req.url).origin), 201);
  });
  return app;
}

/** /v1/shares */
export function shareRoutes(shares: Shares) {
  const app = new Hono<AuthEnv>();
  app.get("/", async (c) => {
    const origin = new URL(c.req.url).origin;
    const list = await shares.list(c.get("userId"));
    return c.json({ shares: await Promise.all(list.map((s) => view(shares, s, origin))) });
  });
  app.delete("/:id", async (c) => {
    await shares.revoke(c.get("userId"), c.req.param("id"));
    return c.body(null, 204);
  });
  return app;
}
