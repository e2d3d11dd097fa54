/** zod at the edge: a bad query or JSON body is a 400 that says which field and why. */
import { BadRequest } from "@pisync/core";
import type { Context } from "hono";
import * as z from "zod/mini";

/**
 * The request's query string parsed by `schema`.
 * @throws BadRequest naming each field that fails and why.
 */
export function parseQuery<T extends z.ZodMiniType>(schema: T, c: Context): z.infer<T> {
  const result = schema.safeParse(c.req.query());
  if (!result.success) throw new BadRequest(`bad query: ${z.prettifyError(result.error).replaceAll("\n", "; ")}`);
  return result.data;
}

/**
 * The request's JSON body parsed by `schema`.
 * @throws BadRequest when the body is not JSON, or naming each field that fails and why.
 */
export async function parseJson<T extends z.ZodMiniType>(schema: T, c: Context): Promise<z.infer<T>> {
  let value: unknown;
  try {
    value = await c.req.json();
  } catch {
    throw new BadRequest("the body must be JSON");
  }
  const result = schema.safeParse(value);
  if (!result.success) throw new BadRequest(`bad body: ${z.prettifyError(result.error).replaceAll("\n", "; ")}`);
  return result.data;
}
