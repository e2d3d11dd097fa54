/**
 * The Lambda entry, invoked with API Gateway v2 (HTTP API) and function-URL events — base64
 * gzip bodies in, binary and gzip answers out — against DynamoDB Local and s3rver.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { newShareKeys, Tokens } from "@pisync/core";
import { StorageUnavailableError, type Stores } from "@pisync/store";
import { testAwsStores } from "@pisync/testing";
import { event } from "@pisync/testing/lambda-events";
import type { LambdaContext } from "hono/aws-lambda";
import { beforeAll, describe, expect, it } from "vitest";
import { createHandler } from "../src/lambda.js";

const context = {} as LambdaContext;
const enc = (text: string) => new TextEncoder().encode(text);

/** A session of `count` messages in a chain, the i-th saying `content(i)`. */
function chainSession(id: string, count: number, content: (i: number) => string): string {
  let lines = `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
  for (let i = 0; i < count; i++) {
    const message = { role: "user", content: content(i), timestamp: 1 };
    const parentId = i === 0 ? null : `m${i - 1}`;
    lines += `${JSON.stringify({ type: "message", id: `m${i}`, parentId, timestamp: "2026-01-01T00:00:01.000Z", message })}\n`;
  }
  return lines;
}

/** `stores`' blobs, whose reads fail as the bucket not answering while `down()` says so. */
function failingReads(stores: Stores, down: () => boolean): Stores["blobs"] {
  const blobs = Object.create(stores.blobs) as Stores["blobs"];
  blobs.get = (key, range) =>
    down() ? Promise.reject(new StorageUnavailableError("the bucket did not answer")) : stores.blobs.get(key, range);
  return blobs;
}

/** Invokes `handler` with a function-URL event. */
function caller(handler: ReturnType<typeof createHandler>) {
  return async (method: string, path: string, headers: Record<string, string>, body?: Uint8Array) =>
    (await handler(event("function-url", method, path, headers, body), context)) as {
      statusCode: number;
      headers: Record<string, string>;
      body: string;
    };
}

describe("the Lambda entry", () => {
  let handler: ReturnType<typeof createHandler>;
  let token: string;
  let stores: Stores;
  beforeAll(async () => {
    stores = await testAwsStores();
    handler = createHandler(stores);
    token = (await new Tokens(stores.meta).create("lambda-user", "test")).token;
  });

  for (const kind of ["http-api", "function-url"] as const) {
    it(`${kind}: appends a gzip body, answers HEAD, serves raw bytes (binary, and gzip)`, async () => {
      const id = `lambda-${kind}`;
      const lines =
        `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n` +
        `${JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "héllo \u2028 ☕", timestamp: 1 } })}\n`;
      const bytes = new TextEncoder().encode(lines);
      const auth = { Authorization: `Bearer ${token}` };
      const appended = (await handler(
        event(
          kind,
          "PATCH",
          `/v1/sessions/${id}`,
          { ...auth, "Upload-Offset": "0", "Content-Encoding": "gzip" },
          gzipSync(bytes),
        ),
        context,
      )) as { statusCode: number; headers: Record<string, string>; body: string };
      expect(appended.statusCode, appended.body).toBe(200);
      expect(appended.headers["upload-offset"]).toBe(String(bytes.length));

      const head = (await handler(event(kind, "HEAD", `/v1/sessions/${id}`, auth), context)) as {
        statusCode: number;
        headers: Record<string, string>;
      };
      expect(head.statusCode).toBe(200);
      expect(head.headers["upload-offset"]).toBe(String(bytes.length));

      const raw = (await handler(event(kind, "GET", `/v1/sessions/${id}/raw`, auth), context)) as {
        statusCode: number;
        body: string;
        isBase64Encoded: boolean;
      };
      expect(raw.statusCode).toBe(200);
      const rawBytes = raw.isBase64Encoded ? Buffer.from(raw.body, "base64") : Buffer.from(raw.body);
      expect(rawBytes.equals(Buffer.from(bytes))).toBe(true);

      const gz = (await handler(
        event(kind, "GET", `/v1/sessions/${id}/raw`, { ...auth, "Accept-Encoding": "gzip" }),
        context,
      )) as {
        statusCode: number;
        body: string;
        isBase64Encoded: boolean;
        headers: Record<string, string>;
      };
      expect(gz.headers["content-encoding"]).toBe("gzip");
      expect(gz.isBase64Encoded).toBe(true);
      expect(gunzipSync(Buffer.from(gz.body, "base64")).equals(Buffer.from(bytes))).toBe(true);

      const context2 = (await handler(event(kind, "GET", `/v1/sessions/${id}/context?leaf=a1`, auth), context)) as {
        statusCode: number;
        body: string;
      };
      expect(JSON.parse(context2.body).messages[0].content).toBe("héllo \u2028 ☕");
    });
  }

  it("refuses a missing token with 401, and answers /healthz without one", async () => {
    const denied = (await handler(event("function-url", "GET", "/v1/sessions", {}), context)) as { statusCode: number };
    expect(denied.statusCode).toBe(401);
    const health = (await handler(event("function-url", "GET", "/healthz", {}), context)) as { statusCode: number };
    expect(health.statusCode).toBe(200);
  });

  it("answers 503 when storage fails while a streamed answer is read, not a failed invocation", async () => {
    const id = "lambda-streamed";
    const lines = chainSession(id, 20, (i) => `hello ${i}`);
    // The bucket stops answering once the session's tree is known: /context has sent its
    // status and headers when it reads the lines.
    let down = false;
    const blobs = failingReads(stores, () => down);
    const call = caller(createHandler({ ...stores, blobs }, { log: () => {} }));
    const auth = { Authorization: `Bearer ${token}` };
    const appended = await call("PATCH", `/v1/sessions/${id}`, { ...auth, "Upload-Offset": "0" }, enc(lines));
    expect(appended.statusCode, appended.body).toBe(200);
    const paths = [`/v1/sessions/${id}/context`, `/v1/sessions/${id}/md`];
    for (const path of paths) expect((await call("GET", path, auth)).statusCode, path).toBe(200);
    down = true;
    for (const path of paths) {
      const answer = await call("GET", path, auth);
      expect(answer.statusCode, path).toBe(503);
      expect(answer.headers["retry-after"]).toBeDefined();
      expect(JSON.parse(answer.body)).toMatchObject({ code: "storage_unavailable" });
    }
    // A HEAD is not read whole: its body is dropped.
    expect((await call("HEAD", `/v1/sessions/${id}/context`, auth)).statusCode).toBe(200);
    down = false;
    expect((await call("GET", `/v1/sessions/${id}/context`, auth)).statusCode).toBe(200);
  });

  it("a share's download cut by storage answers 503 without the download's headers", async () => {
    const id = "lambda-download";
    // Over 4 MB: the download reads it in two parts, and the bucket fails the second.
    const lines = chainSession(id, 80, (i) => `${i} ${"x".repeat(60_000)}`);
    let reads = Number.POSITIVE_INFINITY;
    const blobs = failingReads(stores, () => reads-- <= 0);
    const keys = newShareKeys();
    const call = caller(createHandler({ ...stores, blobs }, { log: () => {}, shareKeys: async () => keys }));
    const auth = { Authorization: `Bearer ${token}` };
    const gzip = { ...auth, "Upload-Offset": "0", "Content-Encoding": "gzip" };
    expect((await call("PATCH", `/v1/sessions/${id}`, gzip, gzipSync(enc(lines)))).statusCode).toBe(200);
    const json = { ...auth, "Content-Type": "application/json" };
    const made = await call("POST", `/v1/sessions/${id}/shares`, json, enc(JSON.stringify({ maskSecrets: false })));
    const download = `${new URL((JSON.parse(made.body) as { url: string }).url).pathname}/raw`;
    expect((await call("GET", download, {})).headers["content-disposition"]).toContain(`${id}.jsonl`);
    reads = 1;
    const cut = await call("GET", download, {});
    expect(cut.statusCode).toBe(503);
    expect(JSON.parse(cut.body)).toMatchObject({ code: "storage_unavailable" });
    // A browser would otherwise save the error as the session's file.
    expect(cut.headers["content-disposition"]).toBeUndefined();
  });
});
