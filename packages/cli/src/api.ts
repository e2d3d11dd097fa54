/**
 * The HTTP client of the sync service. Failures and busy answers are retried as `retry.ts`
 * says: network errors and 5xx with short jittered backoff (a server that comes back is used
 * again within seconds); 429, 503 and 507 waited out as the server's `Retry-After` asks, each
 * wait announced (`onWait`), up to a bound per request. A request that keeps failing throws
 * `Transient`, which callers treat as "try again later" (nothing is dropped, nothing spins).
 * Every answer is bounded (see `http.ts`): in size (a session's bytes by the size its metadata
 * gives) and in time (an overall deadline per request besides the idle timeout).
 */
import { createHash } from "node:crypto";
import { deflateRawSync, gzipSync } from "node:zlib";
import {
  type AppendResponse,
  type DeleteReceipt,
  DICT_ENCODING,
  type ErrorCode,
  type GenerationList,
  HEADERS,
  isErrorCode,
  type RenameResponse,
  type UploadTicket,
} from "@pisync/protocol";
import { CliError, EXIT } from "./cli-error.js";
import type { Login } from "./config.js";
import { DEFAULT_DEADLINE_MS, type HttpResponse, httpRequest } from "./http.js";
import { type RetryPolicy, Transient, withRetries } from "./retry.js";

export { Transient };

/**
 * The server answered with an error status; exits 3 for 401, 4 for 404/410, else 1. Callers
 * decide on `status` and `reason` (the protocol's error code), never on the English message.
 */
export class ApiError extends CliError {
  /** The server's machine-readable code; undefined when it sent none this client knows. */
  readonly reason: ErrorCode | undefined;

  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(
      typeof body.error === "string" ? body.error : `HTTP ${status}`,
      status === 401 ? EXIT.auth : status === 404 || status === 410 ? EXIT.notFound : EXIT.failed,
    );
    this.reason = isErrorCode(body.code) ? body.code : undefined;
  }
}

/** The server refused the token (401): nothing works until the user logs in again. Exits 3. */
export class Unauthorized extends ApiError {
  constructor(body: Record<string, unknown> = {}) {
    super(401, body);
    this.message = `the server refused the token (${this.message}): run pisync login`;
  }
}

export interface ApiOptions extends RetryPolicy {
  /** Overall deadline of one request, in ms (default {@link DEFAULT_DEADLINE_MS}); large downloads get more. */
  timeoutMs?: number;
}

/** Time added to a request's deadline per MiB it is known to carry (a slow link's 256 KiB/s). */
const DEADLINE_PER_MIB_MS = 4000;

/** A session's bytes may grow between reading its size and its bytes: by at most this much. */
const GROWTH_BYTES = 8 * 1024 * 1024;
/** Blobs are images: generous, but bounded. */
const MAX_BLOB_BYTES = 256 * 1024 * 1024;
/** The largest team session `pull --team` takes (its size is not known beforehand). */
const MAX_TEAM_RAW_BYTES = 512 * 1024 * 1024;

export type { AppendResponse };

export class Api {
  constructor(
    readonly login: Login,
    private readonly options: ApiOptions = {},
  ) {}

  private url(path: string): string {
    return `${this.login.endpoint}${path}`;
  }

  /** One request with retries; answers any status below 500 but 429 (see `retry.ts`). */
  async request(
    method: string,
    path: string,
    init: {
      headers?: Record<string, string>;
      body?: Uint8Array;
      bearer?: boolean;
      maxBytes?: number;
      /** The answer's size when known (a session's bytes): its deadline grows with it. */
      expectedBytes?: number;
    } = {},
  ): Promise<HttpResponse> {
    const headers = {
      ...(init.bearer === false ? {} : { Authorization: `Bearer ${this.login.token}` }),
      ...init.headers,
    };
    const url = path.startsWith("http") ? path : this.url(path);
    // Room for a large answer or body on a slow link, beyond the deadline of a small one.
    const large = Math.max(init.body?.length ?? 0, init.expectedBytes ?? 0) / (1024 * 1024);
    const deadlineMs = (this.options.timeoutMs ?? DEFAULT_DEADLINE_MS) + Math.floor(large * DEADLINE_PER_MIB_MS);
    // Named by method and path only: a presigned URL's query is a credential.
    return withRetries(
      `${method} ${new URL(url).pathname}`,
      () => httpRequest(method, url, headers, init.body, { maxBytes: init.maxBytes, deadlineMs }),
      this.options,
    );
  }

  /** One cheap authenticated request: throws `Unauthorized` (exit 3) when the token is refused. */
  async verifyLogin(): Promise<void> {
    this.expectOk(await this.request("GET", "/v1/sessions?limit=1"));
  }

  /** Whether the server answers at all (one cheap unauthenticated `HEAD`, no retries). */
  async probe(): Promise<boolean> {
    try {
      const r = await httpRequest("HEAD", this.url("/healthz"), {}, undefined, {
        maxBytes: 0,
        connectTimeoutMs: 5000,
        idleTimeoutMs: 5000,
      });
      return r.status < 500 && r.status !== 429;
    } catch {
      return false;
    }
  }

  private expectOk(response: HttpResponse): HttpResponse {
    if (response.status >= 200 && response.status < 300) return response;
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(response.body.toString("utf8"));
    } catch {}
    if (response.status === 401) throw new Unauthorized(body);
    throw new ApiError(response.status, body);
  }

  /** Committed length and generation; undefined when the session is not in the cloud. */
  async head(sessionId: string): Promise<{ offset: number; generation: number } | undefined> {
    const r = await this.request("HEAD", `/v1/sessions/${encodeURIComponent(sessionId)}`);
    if (r.status === 404) return undefined;
    this.expectOk(r);
    return {
      offset: Number(r.headers[HEADERS.uploadOffset.toLowerCase()]),
      generation: Number(String(r.headers.etag ?? "").replace(/\D/g, "")),
    };
  }

  /** PATCH (append at `offset`) or PUT (a new generation); throws ApiError on 4xx. */
  async write(
    sessionId: string,
    body: Uint8Array,
    options: { offset: number; generation?: number; replace?: boolean; uploadId?: string; dictionary?: Uint8Array },
  ): Promise<AppendResponse> {
    const headers: Record<string, string> = { [HEADERS.uploadOffset]: String(options.offset) };
    if (options.generation !== undefined) headers["If-Match"] = `"${options.generation}"`;
    let payload: Uint8Array | undefined;
    if (options.uploadId) headers[HEADERS.upload] = options.uploadId;
    else if (options.dictionary?.length) {
      // The bytes just before the offset as a deflate dictionary: lines repeat their neighbours.
      payload = deflateRawSync(body, { dictionary: options.dictionary });
      headers["Content-Encoding"] = DICT_ENCODING;
      headers[HEADERS.bodySha256] = createHash("sha256").update(body).digest("hex");
    } else {
      payload = gzipSync(body);
      headers["Content-Encoding"] = "gzip";
    }
    const r = await this.request(options.replace ? "PUT" : "PATCH", `/v1/sessions/${encodeURIComponent(sessionId)}`, {
      headers,
      body: payload,
    });
    return JSON.parse(this.expectOk(r).body.toString("utf8")) as AppendResponse;
  }

  /**
   * A rename: the session's title slot (its first line) replaced by `slot`, in the current
   * generation `generation`; every other byte stays. Throws ApiError on 4xx (409: the cloud's
   * first line is not a title slot of this length).
   */
  async rename(sessionId: string, slot: Uint8Array, generation: number): Promise<RenameResponse> {
    const r = await this.request("PUT", `/v1/sessions/${encodeURIComponent(sessionId)}/title`, {
      headers: { "If-Match": `"${generation}"`, "Content-Type": "application/x-ndjson" },
      body: slot,
    });
    return JSON.parse(this.expectOk(r).body.toString("utf8")) as RenameResponse;
  }

  /** Uploads one large line outside the append request; returns the upload id to append. */
  async upload(sessionId: string, bytes: Uint8Array): Promise<string> {
    const r = await this.request("POST", `/v1/sessions/${encodeURIComponent(sessionId)}/uploads`, {
      headers: { "Content-Type": "application/json" },
      body: Buffer.from(
        JSON.stringify({ length: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }),
      ),
    });
    const { uploadId, url, authorization } = JSON.parse(this.expectOk(r).body.toString("utf8")) as UploadTicket;
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
      maxBytes: end - start,
      expectedBytes: end - start,
    });
    return new Uint8Array(this.expectOk(r).body);
  }

  /**
   * A session's bytes (the current generation, or `generation`), gzip on the wire. `size` is
   * what its metadata says (read with `HEAD` when not given): an answer larger than that (plus
   * what a session being written may have grown since) is refused.
   */
  async raw(sessionId: string, options: { size?: number; generation?: number } = {}): Promise<Uint8Array> {
    const id = encodeURIComponent(sessionId);
    let size = options.size;
    if (size === undefined && options.generation === undefined) size = (await this.head(sessionId))?.offset ?? 0;
    if (size === undefined) {
      const { generations } = await this.json<GenerationList>(`/v1/sessions/${id}/generations`);
      size = generations.find((g) => g.generation === options.generation)?.bytes ?? 0;
    }
    const query = options.generation === undefined ? "" : `?generation=${options.generation}`;
    const r = await this.request("GET", `/v1/sessions/${id}/raw${query}`, {
      headers: { "Accept-Encoding": "gzip" },
      maxBytes: size + GROWTH_BYTES,
      expectedBytes: size,
    });
    return new Uint8Array(this.expectOk(r).body);
  }

  /**
   * A team session's bytes, masked as a share link's (`GET /v1/teams/{team}/sessions/{ref}/raw`),
   * and its owner; gzip on the wire, at most {@link MAX_TEAM_RAW_BYTES}.
   */
  async teamRaw(teamId: string, ref: string): Promise<{ bytes: Uint8Array; owner: string | undefined }> {
    const r = await this.request(
      "GET",
      `/v1/teams/${encodeURIComponent(teamId)}/sessions/${encodeURIComponent(ref)}/raw`,
      {
        headers: { "Accept-Encoding": "gzip" },
        maxBytes: MAX_TEAM_RAW_BYTES,
      },
    );
    const owner = this.expectOk(r).headers[HEADERS.owner.toLowerCase()];
    return { bytes: new Uint8Array(r.body), owner: typeof owner === "string" ? owner : undefined };
  }

  async postJson<T>(path: string, body: unknown): Promise<T> {
    const r = await this.request("POST", path, {
      headers: { "Content-Type": "application/json" },
      body: Buffer.from(JSON.stringify(body)),
    });
    return JSON.parse(this.expectOk(r).body.toString("utf8")) as T;
  }

  /** PATCH with a JSON body; the JSON answer. */
  async patchJson<T>(path: string, body: unknown): Promise<T> {
    const r = await this.request("PATCH", path, {
      headers: { "Content-Type": "application/json" },
      body: Buffer.from(JSON.stringify(body)),
    });
    return JSON.parse(this.expectOk(r).body.toString("utf8")) as T;
  }

  /** PUT with a JSON body; the JSON answer. */
  async putJson<T>(path: string, body: unknown): Promise<T> {
    const r = await this.request("PUT", path, {
      headers: { "Content-Type": "application/json" },
      body: Buffer.from(JSON.stringify(body)),
    });
    return JSON.parse(this.expectOk(r).body.toString("utf8")) as T;
  }

  async delete(path: string): Promise<void> {
    this.expectOk(await this.request("DELETE", path));
  }

  /** Deletes a session for good; the server's receipt of what went (undefined from a server that gives none). */
  async deleteSession(sessionId: string): Promise<DeleteReceipt | undefined> {
    const r = this.expectOk(
      await this.request("DELETE", `/v1/sessions/${encodeURIComponent(sessionId)}`, {
        headers: { Prefer: "return=representation" },
      }),
    );
    if (r.status === 204 || r.body.length === 0) return undefined;
    return JSON.parse(r.body.toString("utf8")) as DeleteReceipt;
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
    const r = await this.request("GET", `/v1/blobs/${hash}`, { maxBytes: MAX_BLOB_BYTES });
    if (r.status === 404) return undefined;
    return new Uint8Array(this.expectOk(r).body);
  }

  async json<T>(path: string): Promise<T> {
    return JSON.parse(this.expectOk(await this.request("GET", path)).body.toString("utf8")) as T;
  }
}
