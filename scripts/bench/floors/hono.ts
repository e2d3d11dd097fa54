/**
 * `npm run bench:bundle`'s variant (h), Hono alone: a bare Hono app whose one route answers the
 * append's request from memory, through `hono/aws-lambda`. Bundled with the shipped options, it
 * is what any function built on Hono pays at a cold start.
 */
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";

const app = new Hono();
app.patch("/v1/sessions/:id", (c) => c.json({ id: c.req.param("id"), offset: 0 }));

/** The Lambda handler. */
export const handler = handle(app);
