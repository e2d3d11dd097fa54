/**
 * The exact bytes of a generation: `Range: bytes=a-b` (one range) answers 206, and a client
 * that accepts gzip gets the whole file compressed.
 */
import { BadRequest, type Reader } from "@pisync/core";
import type { Context } from "hono";

/** Parses a single `bytes=` range against a length; `undefined` for none (or many: served whole). */
export function parseRange(
  header: string | undefined,
  total: number,
): { start: number; end: number } | "unsatisfiable" | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, total - suffix), end: total };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? total : Math.min(Number(match[2]) + 1, total);
  if (start >= total || end <= start) return "unsatisfiable";
  return { start, end };
}

/**
 * A session's bytes as an HTTP answer: whole (200, gzip when the client accepts it) or one
 * `Range` (206; 416 when it cannot be met), of the current generation or the one asked for.
 * @throws NotFound (from the reader) for a missing session or generation, or another user's.
 */
export async function rawResponse(c: Context, reader: Reader, userId: string, sessionId: string, generation?: number) {
  const { state } = await reader.generationState(userId, sessionId, generation);
  const total = state.length;
  const range = parseRange(c.req.header("Range"), total);
  c.header("Content-Type", "application/x-ndjson");
  c.header("Accept-Ranges", "bytes");
  // A rename keeps the length and changes the first line: it is a version of its own.
  c.header("ETag", `"${state.generation}-${total}${state.renames ? `-r${state.renames}` : ""}"`);
  c.header("Cache-Control", "private, no-cache");
  if (range === "unsatisfiable") {
    c.header("Content-Range", `bytes */${total}`);
    return c.body(null, 416);
  }
  if (range) {
    const { bytes } = await reader.raw(userId, sessionId, { generation: state.generation, ...range });
    c.header("Content-Range", `bytes ${range.start}-${range.end - 1}/${total}`);
    return c.body(bytes as Uint8Array<ArrayBuffer>, 206);
  }
  const { bytes } = await reader.raw(userId, sessionId, { generation: state.generation });
  if (/\bgzip\b/.test(c.req.header("Accept-Encoding") ?? "")) {
    const gzipped = await new Response(
      new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer();
    c.header("Content-Encoding", "gzip");
    c.header("Vary", "Accept-Encoding");
    return c.body(gzipped, 200);
  }
  if (bytes.length !== total) throw new BadRequest("the stored bytes are shorter than the session: try again");
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200);
}
