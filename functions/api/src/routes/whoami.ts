/** /v1/whoami: the account, the device and the server's id, as the token in use sees them. */
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import type { Services } from "../services.js";

/** `GET /v1/whoami`: what a client keys its confirmed backups by (server id and account). */
export function whoamiRoutes(services: Services) {
  const app = new Hono<AuthEnv>();
  app.get("/", async (c) => c.json(await services.identities.whoami(c.get("userId"), c.get("tokenId"))));
  return app;
}
