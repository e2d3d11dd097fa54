/** zod at the edge: a bad query or JSON body is a 400 that says which field and why. */
import { BadRequest } from "@pisync/core";
import type { Context } from "hono";
import * as z from "zod/mini";

/** The query, checked by `schema`. @throws BadRequest `bad_query` */
export function parseQuery<T extends z.ZodMiniType>(schema: T, c: Context): z.infer<T> {
  const result = schema.safeParse(c.req.query());
  if (!result.success)
    throw new BadRequest(`bad query: ${z.prettifyError(result.error).replaceAll("\n", "; ")}`, "bad_query");
  return result.data;
}

/** The JSON body, checked by `schema`. @throws BadRequest `bad_json`, `bad_body` */
export async function parseJson<T extends z.ZodMiniType>(schema: T, c: Context): Promise<z.infer<T>> {
  let value: unknown;
  try {
    value = await c.req.json();
  } catch {
    throw new BadRequest("the body must be JSON", "bad_json");
  }
  const result = schema.safeParse(value);
  if (!result.success)
    throw new BadRequest(`bad body: ${z.prettifyError(result.error).replaceAll("\n", "; ")}`, "bad_body");
  return result.data;
}

/** A form body, checked (a precise 400 for what is wrong). @throws BadRequest `bad_request` */
export async function parseForm<T extends z.ZodMiniType>(schema: T, c: Context): Promise<z.infer<T>> {
  const body = await c.req.parseBody();
  const parsed = schema.safeParse(Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === "string")));
  if (!parsed.success) {
    const field = String(parsed.error.issues[0]?.path[0] ?? "form");
    throw new BadRequest(`the form's ${field} is missing or not valid`, "bad_request");
  }
  return parsed.data;
}
