/**
 * A small HTTP client on node:http/https (not fetch: undici alone adds ~12 MB to an idle
 * process, and `watch` must stay small). Keep-alive, a timeout, bodies as bytes.
 */
import http from "node:http";
import https from "node:https";

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 8 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 8 }),
};

export function httpRequest(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Uint8Array,
  timeoutMs = 120_000,
): Promise<HttpResponse> {
  const target = new URL(url);
  const lib = target.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      target,
      {
        method,
        headers: { ...headers, "Content-Length": String(body?.length ?? 0) },
        agent: agents[target.protocol as "http:" | "https:"],
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`timed out after ${timeoutMs / 1000} s`)));
    req.on("error", reject);
    req.end(body);
  });
}
