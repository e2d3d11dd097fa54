/**
 * A small HTTP client on node:http/https (not fetch: undici alone adds ~12 MB to an idle
 * process, and `watch` must stay small). Keep-alive, bodies as bytes, and every answer bounded:
 * a byte limit (checked as bytes arrive, after decompression, so neither an endless stream nor
 * a gzip bomb can fill memory), a connect timeout, an idle timeout and an overall deadline.
 */
import http from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface HttpLimits {
  /** Most body bytes accepted, after decompression (default 64 MiB); more is `ResponseTooLarge`. */
  maxBytes?: number;
  /** Time to open the connection (default 15 s). */
  connectTimeoutMs?: number;
  /** Longest silence while sending or receiving (default 60 s). */
  idleTimeoutMs?: number;
  /**
   * Longest time for the whole exchange, from connecting to the answer's last byte (default
   * {@link DEFAULT_DEADLINE_MS}): a server that trickles a byte now and then cannot hold the
   * client past it. More is `DeadlineExceeded`.
   */
  deadlineMs?: number;
}

/** The answer was larger than the caller allows: refused, not retried. */
export class ResponseTooLarge extends Error {}

/** The whole answer did not arrive within the request's deadline: not retried (the server answers, too slowly). */
export class DeadlineExceeded extends Error {}

/** Default deadline of one request (callers add time for an answer they know to be large). */
export const DEFAULT_DEADLINE_MS = 120_000;

/** Default answer limit: far above any JSON answer; raw sessions pass their known size. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 8 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 8 }),
};

/** Human size for messages. */
function size(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${n} bytes`;
}

/**
 * One request. A gzip answer is decompressed (its `content-encoding` header removed); the
 * body is held in memory up to `maxBytes`, and the request is aborted as soon as it exceeds it.
 */
export function httpRequest(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Uint8Array,
  limits: HttpLimits = {},
): Promise<HttpResponse> {
  const target = new URL(url);
  const lib = target.protocol === "https:" ? https : http;
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
  const idleMs = limits.idleTimeoutMs ?? 60_000;
  const connectMs = limits.connectTimeoutMs ?? 15_000;
  const deadlineMs = limits.deadlineMs ?? DEFAULT_DEADLINE_MS;
  return new Promise((resolve, reject) => {
    let settled = false;
    let connectTimer: NodeJS.Timeout | undefined;
    const deadline = setTimeout(
      () =>
        fail(
          new DeadlineExceeded(
            `${method} ${target.pathname}: no complete answer within ${deadlineMs / 1000} s (PISYNC_TIMEOUT or --timeout sets the limit)`,
          ),
        ),
      deadlineMs,
    );
    const streams: Readable[] = [];
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(deadline);
      for (const stream of streams) stream.destroy();
      req.destroy();
      reject(error);
    };
    const tooLarge = () =>
      new ResponseTooLarge(`${method} ${target.pathname}: the answer is larger than ${size(maxBytes)}: refused`);
    const req = lib.request(
      target,
      {
        method,
        headers: { ...headers, "Content-Length": String(body?.length ?? 0) },
        agent: agents[target.protocol as "http:" | "https:"],
        timeout: idleMs,
      },
      (res) => {
        streams.push(res);
        const status = res.statusCode ?? 0;
        const hasBody = method !== "HEAD" && status !== 204 && status !== 304;
        const gzip = hasBody && /^\s*(x-)?gzip\s*$/i.test(String(res.headers["content-encoding"] ?? ""));
        const declared = Number(res.headers["content-length"]);
        if (hasBody && !gzip && declared > maxBytes) return fail(tooLarge());
        let source: Readable = res;
        if (gzip) {
          const gunzip = createGunzip();
          streams.push(gunzip);
          res.on("error", fail);
          source = res.pipe(gunzip);
        }
        const chunks: Buffer[] = [];
        let received = 0;
        source.on("data", (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) return fail(tooLarge());
          chunks.push(chunk);
        });
        source.on("end", () => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          const out = { ...res.headers };
          if (gzip) delete out["content-encoding"];
          resolve({ status, headers: out, body: Buffer.concat(chunks) });
        });
        source.on("error", fail);
        res.on("close", () => {
          if (!res.complete) fail(new Error(`${method} ${target.pathname}: the connection closed mid-answer`));
        });
      },
    );
    req.on("socket", (socket) => {
      if (!socket.connecting) return;
      connectTimer = setTimeout(
        () => fail(new Error(`could not connect to ${target.host} within ${connectMs / 1000} s`)),
        connectMs,
      );
      socket.once("connect", () => clearTimeout(connectTimer));
    });
    req.on("timeout", () => fail(new Error(`${method} ${target.pathname}: no data for ${idleMs / 1000} s`)));
    req.on("error", fail);
    req.end(body);
  });
}
