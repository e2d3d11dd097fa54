/** Bearer-token authentication: every /v1 route runs as the token's user, and only as them. */
import type { Tokens } from "@pisync/core";
import { createMiddleware } from "hono/factory";
import { admit } from "./rate-limit.js";

export type AuthEnv = { Variables: { userId: string; tokenId: string } };

/**
 * Middleware that authenticates `Authorization: Bearer <token>` and sets `userId` and
 * `tokenId` for the handlers after it. A missing, malformed or unknown token throws
 * `Unauthorized` (answered 401 by `onError`).
 */
export function bearerAuth(tokens: Tokens) {
  return createMiddleware<AuthEnv>(async (c, next) => {
    const header = c.req.header("Authorization") ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const record = await tokens.authenticate(match?.[1]);
    c.set("userId", record.userId);
    c.set("tokenId", record.id);
    admit(c, "token", record.id, record.userId);
    await next();
  });
}
