/**
 * Reading request bodies within limits: the bytes as sent (at most `maxRequestBytes`), then,
 * decompressed, stopped as soon as they pass `maxBodyBytes` (a gzip bomb costs us at most
 * that much). Two encodings:
 * - `gzip`;
 * - `pisync-deflate-dict`: raw deflate with a preset dictionary, the 32 KiB of committed bytes
 *   just before `Upload-Offset` (lines of a session repeat their neighbours' keys and values:
 *   a single appended line shrinks to about a quarter instead of a third). The request carries
 *   `Pisync-Body-SHA256`, the hash of the decompressed body: a client whose idea of those bytes
 *   was wrong gets a 400, never a stored body it did not mean.
 */
import { createHash } from "node:crypto";
import { inflateRawSync } from "node:zlib";
import { BadRequest, TooLarge } from "@pisync/core";
import { DICT_ENCODING, HEADERS, SHA256_HEX } from "@pisync/protocol";
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

/**
 * Reads the body. `dictionary` gives the committed bytes before the offset, for the
 * dictionary encoding (asked only when the request uses it).
 * @throws TooLarge when the body, compressed or not, is over its limit.
 * @throws BadRequest for an unsupported `Content-Encoding`, a body that does not decompress, or
 *   a dictionary-encoded body without its SHA-256 or whose SHA-256 does not match.
 */
export async function readBody(
  c: Context,
  limits: BodyLimits,
  dictionary?: () => Promise<Uint8Array>,
): Promise<Uint8Array> {
  const declared = c.req.header("Content-Length");
  if (declared !== undefined && Number(declared) > limits.maxRequestBytes) {
    throw new TooLarge(`the request body is over the limit of ${limits.maxRequestBytes} bytes`);
  }
  const stream = c.req.raw.body;
  const sent = stream ? await readCapped(stream, limits.maxRequestBytes, "the request body") : new Uint8Array(0);
  const encoding = (c.req.header("Content-Encoding") ?? "identity").trim().toLowerCase();
  if (encoding === "identity" || encoding === "") return sent;
  if (encoding === DICT_ENCODING && dictionary) return inflateWithDictionary(c, sent, await dictionary(), limits);
  if (encoding !== "gzip") {
    throw new BadRequest(
      `Content-Encoding ${encoding} is not supported (gzip and ${DICT_ENCODING} are)`,
      "unsupported_encoding",
    );
  }
  try {
    const inflated = new Blob([sent]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await readCapped(inflated, limits.maxBodyBytes, "the decompressed body");
  } catch (error) {
    if (error instanceof TooLarge) throw error;
    throw new BadRequest("the body is not valid gzip", "bad_gzip");
  }
}

function inflateWithDictionary(c: Context, sent: Uint8Array, dictionary: Uint8Array, limits: BodyLimits): Uint8Array {
  const expected = c.req.header(HEADERS.bodySha256);
  if (!expected || !SHA256_HEX.test(expected)) {
    throw new BadRequest(
      `${DICT_ENCODING} needs ${HEADERS.bodySha256}, the hex SHA-256 of the decompressed body`,
      "missing_body_hash",
    );
  }
  let body: Uint8Array;
  try {
    body = inflateRawSync(sent, {
      dictionary: dictionary.length ? dictionary : undefined,
      maxOutputLength: limits.maxBodyBytes,
    });
  } catch (error) {
    if (error instanceof RangeError || (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new TooLarge(`the decompressed body is over the limit of ${limits.maxBodyBytes} bytes`);
    }
    throw new BadRequest(
      `the body is not valid ${DICT_ENCODING} for the committed bytes before its offset`,
      "dictionary_mismatch",
    );
  }
  if (createHash("sha256").update(body).digest("hex") !== expected) {
    throw new BadRequest(
      `the body does not decompress to ${HEADERS.bodySha256}: its dictionary differs from the committed bytes`,
      "dictionary_mismatch",
    );
  }
  return body;
}
