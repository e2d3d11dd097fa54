/**
 * Reading request bodies within limits: the bytes as sent (at most `maxRequestBytes`), then,
 * for `Content-Encoding: gzip`, the bytes decompressed, stopped as soon as they pass
 * `maxBodyBytes` (a gzip bomb costs us at most that much).
 */
import { BadRequest, TooLarge } from "@pisync/core";
import type { Context } from "hono";

export interface BodyLimits {
  /** Bytes on the wire. */
  maxRequestBytes: number;
  /** Bytes after decompression. */
  maxBodyBytes: number;
}

async function readCapped(
  stream: ReadableStream<Uint8Array>,
  max: number,
  what: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw new TooLarge(`${what} is over the limit of ${max} bytes`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

export async function readBody(c: Context, limits: BodyLimits): Promise<Uint8Array> {
  const declared = c.req.header("Content-Length");
  if (declared !== undefined && Number(declared) > limits.maxRequestBytes) {
    throw new TooLarge(`the request body is over the limit of ${limits.maxRequestBytes} bytes`);
  }
  const stream = c.req.raw.body;
  const sent = stream ? await readCapped(stream, limits.maxRequestBytes, "the request body") : new Uint8Array(0);
  const encoding = (c.req.header("Content-Encoding") ?? "identity").trim().toLowerCase();
  if (encoding === "identity" || encoding === "") return sent;
  if (encoding !== "gzip") throw new BadRequest(`Content-Encoding ${encoding} is not supported (gzip is)`);
  try {
    const inflated = new Blob([sent]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await readCapped(inflated, limits.maxBodyBytes, "the decompressed body");
  } catch (error) {
    if (error instanceof TooLarge) throw error;
    throw new BadRequest("the body is not valid gzip");
  }
}
