/** /v1/tokens: a user's device tokens (their hashes only): list, create, revoke. */
import { NotFound } from "@pisync/core";
import { CreateToken, DEVICE_ID } from "@pisync/protocol";
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import type { Services } from "../services.js";
import { parseJson } from "../validate.js";

/** `/v1/tokens`: list, create (the token is shown once) and revoke the signed-in user's API tokens. */
export function tokenRoutes(services: Services) {
  const app = new Hono<AuthEnv>();
  app.get("/", async (c) => {
    const tokens = await services.tokens.list(c.get("userId"));
    return c.json({
      tokens: tokens.map((t) => ({
        id: t.id,
        name: t.name,
        createdAt: t.createdAt,
        ...(t.lastUsedAt ? { lastUsedAt: t.lastUsedAt } : {}),
        current: t.id === c.get("tokenId"),
      })),
    });
  });
  app.post("/", async (c) => {
    const { name } = await parseJson(CreateToken, c);
    // Bounded per user: each token has its own request budget (see rate-limit.ts).
    const { token, record } = await services.tokens.mint(c.get("userId"), name);
    return c.json({ id: record.id, name: record.name, token }, 201);
  });
  app.patch("/:id", async (c) => {
    const { name } = await parseJson(CreateToken, c);
    const id = c.req.param("id");
    if (!DEVICE_ID.test(id) || !(await services.tokens.rename(c.get("userId"), id, name))) {
      throw new NotFound("no such token");
    }
    return c.json({ id, name: name.slice(0, 100) });
  });
  app.delete("/:id", async (c) => {
    if (!(await services.tokens.revoke(c.get("userId"), c.req.param("id")))) throw new NotFound("no such token");
    return c.body(null, 204);
  });
  return app;
}
