/** Share management, for the session's owner: create, list, revoke. */
import { type ShareRecord, type Shares, shareSession } from "@pisync/core";
import { CreateShare, type ShareView } from "@pisync/protocol";
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import { publicOrigin } from "../library-auth.js";
import type { Services } from "../services.js";
import { parseJson } from "../validate.js";

/** A share as the API shows it to its owner (with its view and download counts). */
export async function view(shares: Shares, share: ShareRecord, origin: string): Promise<ShareView> {
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
    views: share.views ?? 0,
    lastViewedAt: share.lastViewedAt ?? null,
    downloads: share.downloads ?? 0,
  };
}

/** POST /v1/sessions/:id/shares */
export function createShareRoute(services: Services, shares: Shares) {
  const app = new Hono<AuthEnv>();
  app.post("/:id/shares", async (c) => {
    const body = await parseJson(CreateShare, c);
    const { share } = await shareSession(services.reader, shares, {
      userId: c.get("userId"),
      sessionId: c.req.param("id"),
      ...body,
    });
    return c.json(await view(shares, share, publicOrigin(c, services.publicUrl)), 201);
  });
  return app;
}

/** /v1/shares */
export function shareRoutes(services: Services, shares: Shares) {
  const app = new Hono<AuthEnv>();
  app.get("/", async (c) => {
    const origin = publicOrigin(c, services.publicUrl);
    const list = await shares.list(c.get("userId"));
    return c.json({ shares: await Promise.all(list.map((s) => view(shares, s, origin))) });
  });
  app.delete("/:id", async (c) => {
    await shares.revoke(c.get("userId"), c.req.param("id"));
    return c.body(null, 204);
  });
  return app;
}
