/** zod at the edge: a bad query or JSON body is a 400 that says which field and why. */
import { BadRequest } from "@pisync/core";
import type { Context } from "hono";
import * as z from "zod/mini";

export function parseQuery<T extends z.ZodMiniType>(schema: T, c: Context): z.infer<T> {
  const result = schema.safeParse(c.req.query());
  if (!result.success) throw new BadRequest(`bad query: ${z.prettifyError(result.error).replaceAll("\n", "; ")}`);
  return result.data;
}

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
