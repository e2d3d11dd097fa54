/**
 * The client against a busy server, over a real socket: `Retry-After` read as seconds or as an
 * HTTP date and honoured (never sooner), capped, each wait announced with what it waits for;
 * 429, 503 and 507 alike; and a server that stays busy past the bound ends with a clear error.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api, Transient } from "../src/api.js";
import { type BusyWait, MAX_RETRY_AFTER_MS, retryAfterMs } from "../src/retry.js";

describe("Retry-After", () => {
  it("is seconds or an HTTP date; anything else is ignored", () => {
    const now = Date.parse("2026-01-01T00:00:00.000Z");
    expect(retryAfterMs("7", now)).toBe(7000);
    expect(retryAfterMs("0", now)).toBe(0);
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs("-3", now)).toBeUndefined();
    expect(retryAfterMs("2026-01-01", now)).toBeUndefined();
  });
});

/** A server answering each request with the next of `script` (then 200), recording when each came. */
let server: Server;
let url: string;
let script: Array<{ status: number; retryAfter?: () => string }> = [];
let arrivals: number[] = [];

beforeAll(async () => {
  server = createServer((_req, res) => {
    arrivals.push(Date.now());
    const next = script.shift();
    if (!next) return void res.writeHead(200, { "Content-Type": "application/json" }).end('{"ok":true}');
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (next.retryAfter) headers["Retry-After"] = next.retryAfter();
    res.writeHead(next.status, headers).end('{"error":"busy","code":"rate_limited"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const login = () => ({ endpoint: url, token: `pst_${"a".repeat(43)}` });

describe("a busy server", () => {
  it("is waited out as long as it asks, never less: seconds, a date, 503 and 507 alike", async () => {
    arrivals = [];
    const inTwo = () => new Date(Math.ceil((Date.now() + 1500) / 1000) * 1000).toUTCString();
    script = [
      { status: 429, retryAfter: () => "1" },
      { status: 503, retryAfter: inTwo },
      { status: 507, retryAfter: () => "1" },
    ];
    const waits: BusyWait[] = [];
    const r = await new Api(login(), { onWait: (w) => waits.push(w) }).request("GET", "/v1/sessions");
    expect(r.status).toBe(200);
    expect(arrivals).toHaveLength(4);
    expect(arrivals[1] - arrivals[0]).toBeGreaterThanOrEqual(1000);
    expect(arrivals[2] - arrivals[1]).toBeGreaterThanOrEqual(1000);
    expect(arrivals[3] - arrivals[2]).toBeGreaterThanOrEqual(1000);
    expect(waits.map((w) => [w.status, w.request])).toEqual([
      [429, "GET /v1/sessions"],
      [503, "GET /v1/sessions"],
      [507, "GET /v1/sessions"],
    ]);
    expect(waits[2].reason).toContain("storage is full");
  }, 20_000);

  it("caps a long Retry-After, and gives up with a clear error past the bound of one request", async () => {
    arrivals = [];
    script = Array.from({ length: 10 }, () => ({ status: 429, retryAfter: () => "3600" }));
    const slept: number[] = [];
    const api = new Api(login(), {
      maxBusyWaitMs: 3 * MAX_RETRY_AFTER_MS,
      sleep: async (ms) => void slept.push(ms),
    });
    const failed = await api.request("GET", "/v1/shares").catch((e) => e);
    expect(failed).toBeInstanceOf(Transient);
    expect(failed.message).toMatch(
      /^GET \/v1\/shares: the server is busy \(too many requests\) \(HTTP 429\); gave up after waiting 2 min in all$/,
    );
    expect(slept).toHaveLength(2);
    for (const ms of slept) expect(ms).toBeGreaterThanOrEqual(MAX_RETRY_AFTER_MS);
    for (const ms of slept) expect(ms).toBeLessThanOrEqual(MAX_RETRY_AFTER_MS + 1000);
    script = [];
  });
});
