/**
 * The HTTP client of the sync service. Network errors, 429 and 5xx are retried with
 * exponential backoff and full jitter; a request that keeps failing throws `Transient`, which
 * callers treat as "try again later" (nothing is dropped, nothing spins).
 */
import { createHash } from "node:crypto";
import { deflateRawSync, gunzipSync, gzipSync } from "node:zlib";
import type { Login } from "./config.js";
import { type HttpResponse, httpRequest } from "./http.js";

/** The server answered with an error status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(typeof body.error === "string" ? body.error : `HTTP ${status}`);
  }
}

/** The server could not be reached or kept failing: try again later. */
export class Transient extends Error {}

export interface ApiOptions {
  /** Attempts per request before `Transient` (default 6). */
  attempts?: number;
  sleep?: (ms: number) => Promise<void>;
}

const sleeper = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface AppendAnswer {
  offset: number;
  generation: number;
  retry: boolean;
  problems: { kind: string; line?: number; message: string }[];
}

export class Api {
  private readonly attempts: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    readonly login: Login,
    options: ApiOptions = {},
  ) {
    this.attempts = options.attempts ?? 6;
    this.sleep = options.sleep ?? sleeper;
  }

  private url(path: string): string {
    return `${this.login.endpoint}${path}`;
  }

  /** One request with retries; answers any status below 500 (but 429). */
  async request(
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: Uint8Array; bearer?: boolean } = {},
  ): Promise<HttpResponse> {
    let lastError = "";
    const headers = {
      ...(init.bearer === false ? {} : { Authorization: `Bearer ${this.login.token}` }),
      ...init.headers,
    };
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      if (attempt > 0) await this.sleep(Math.random() * Math.min(30_000, 250 * 2 ** attempt));
      try {
        const response = await httpRequest(method, path.startsWith("http") ? path : this.url(path), headers, init.body);
        if (response.status >= 500 || response.status === 429) {
          lastError = `HTTP ${response.status}`;
          continue;
        }
        return response;
      } catch (error) {
        lastError = (error as Error).message;
      }
    }
    throw new Transient(`${method} ${path}: ${lastError}`);
  }

  private expectOk(response: HttpResponse): HttpResponse {
    if (response.status >= 200 && response.status < 300) {
      if (response.headers["content-encoding"] === "gzip") return { ...response, body: gunzipSync(response.body) };
      return response;
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(response.body.toString("utf8"));
    } catch {}
    throw new ApiError(response.status, body);
  }

  /** Committed length and generation; undefined when the session is not in the cloud. */
  async head(sessionId: string): Promise<{ offset: number; generation: number } | undefined> {
    const r = await this.request("HEAD", `/v1/sessions/${encodeURIComponent(sessionId)}`);
    if (r.status === 404) return undefined;
    this.expectOk(r);
    return {
      offset: Number(r.headers["upload-offset"]),
      generation: Number(String(r.headers.etag ?? "").replace(/\D/g, "")),
    };
  }

  /** PATCH (append at `offset`) or PUT (a new generation); throws ApiError on 4xx. */
  async write(
    sessionId: string,
    body: Uint8Array,
    options: { offset: number; generation?: number; replace?: boolean; uploadId?: string; dictionary?: Uint8Array },
  ): Promise<AppendAnswer> {
    const headers: Record<string, string> = { "Upload-Offset": String(options.offset) };
    if (options.generation !== undefined) headers["If-Match"] = `"${options.generation}"`;
    let payload: Uint8Array | undefined;
    if (options.uploadId) headers["Pisync-Upload"] = options.uploadId;
    else if (options.dictionary?.length) {
      // The bytes just before the offset as a deflate dictionary: lines repeat their neighbours.
      payload = deflateRawSync(body, { dictionary: options.dictionary });
      headers["Content-Encoding"] = "pisync-deflate-dict";
      headers["Pisync-Body-SHA256"] = createHash("sha256").update(body).digest("hex");
    } else {
      payload = gzipSync(body);
      headers["Content-Encoding"] = "gzip";
    }
    const r = await this.request(options.replace ? "PUT" : "PATCH", `/v1/sessions/${encodeURIComponent(sessionId)}`, {
      headers,
      body: payload,
    });
    return JSON.parse(this.expectOk(r).body.toString("utf8")) as AppendAnswer;
  }

  /** Uploads one large line outside the append request; returns the upload id to append. */
  async upload(sessionId: string, bytes: Uint8Array): Promise<string> {
    const r = await this.request("POST", `/v1/sessions/${encodeURIComponent(sessionId)}/uploads`, {
      headers: { "Content-Type": "application/json" },
      body: Buffer.from(JSON.stringify({ length: bytes.length })),
    });
    const { uploadId, url, authorization } = JSON.parse(this.expectOk(r).body.toString("utf8")) as {
      uploadId: string;
      url: string;
      authorization: boolean;
    };
    // The bearer token goes to this API only, never to a presigned storage URL.
    const put = await this.request("PUT", url, { body: bytes, bearer: authorization });
    if (put.status < 200 || put.status >= 300) throw new Transient(`upload failed: HTTP ${put.status}`);
    return uploadId;
  }

  /** Bytes [start, end) of the current generation. */
  async range(sessionId: string, start: number, end: number): Promise<Uint8Array> {
    if (end <= start) return new Uint8Array(0);
    const r = await this.request("GET", `/v1/sessions/${encodeURIComponent(sessionId)}/raw`, {
      headers: { Range: `bytes=${start}-${end - 1}`, "Accept-Encoding": "identity" },
    });
    return new Uint8Array(this.expectOk(r).body);
  }

  /** The bytes of the current generation, or of generation `generation`. */
  async raw(sessionId: string, generation?: number): Promise<Uint8Array> {
    const query = generation === undefined ? "" : `?generation=${generation}`;
    const r = await this.request("GET", `/v1/sessions/${encodeURIComponent(sessionId)}/raw${query}`, {
      headers: { "Accept-Encoding": "gzip" },
    });
    return new Uint8Array(this.expectOk(r).body);
  }

  async postJson<T>(path: string, body: unknown): Promise<T> {
    const r = await this.request("POST", path, {
      headers: { "Content-Type": "application/json" },
      body: Buffer.from(JSON.stringify(body)),
    });
    return JSON.parse(this.expectOk(r).body.toString("utf8")) as T;
  }

  async delete(path: string): Promise<void> {
    this.expectOk(await this.request("DELETE", path));
  }

  /** Whether the server holds this user's blob with that hash. */
  async hasBlob(hash: string): Promise<boolean> {
    const r = await this.request("HEAD", `/v1/blobs/${hash}`);
    if (r.status === 404) return false;
    this.expectOk(r);
    return true;
  }

  async putBlob(hash: string, data: Uint8Array): Promise<void> {
    this.expectOk(await this.request("PUT", `/v1/blobs/${hash}`, { body: data }));
  }

  async getBlob(hash: string): Promise<Uint8Array | undefined> {
    const r = await this.request("GET", `/v1/blobs/${hash}`);
    if (r.status === 404) return undefined;
    return new Uint8Array(this.expectOk(r).body);
  }

  async json<T>(path: string): Promise<T> {
    return JSON.parse(this.expectOk(await this.request("GET", path)).body.toString("utf8")) as T;
  }
}
