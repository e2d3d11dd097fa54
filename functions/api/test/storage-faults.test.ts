/**
 * What a client sees when the storage fails, over HTTP on real servers: the AWS pair with one
 * side pointed at a port nothing listens on (connection refused) or at a server that takes
 * connections and never answers (a stopped server), and the embedded store on a full disk.
 * Each answers what it is (503 storage_unavailable or 507 storage_full, with Retry-After), in
 * bounded time, and nothing partial is left behind.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AwsStoresConfig, awsStores } from "@pisync/store/aws";
import { embeddedStores } from "@pisync/store/embedded";
import { fullDisk, testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, enc, makeApp, userToken } from "./harness.js";

const line = (n: number) => `${JSON.stringify({ type: "message", id: `m${n}`, parentId: null, n })}\n`;
const header = `${JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;

/** A server that accepts connections and never answers, as a SIGSTOPped one looks to a client. */
let silent: { endpoint: string; close(): Promise<void> };
/** A port nothing listens on. */
let dead: string;
let config: AwsStoresConfig;
/** Short attempt bounds, so that each case takes about a second. */
const quick = { connectMs: 300, idleMs: 400, requestMs: 400 };

beforeAll(async () => {
  const sockets: Socket[] = [];
  const server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  silent = {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  dead = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  config = await testAwsConfig();
});
afterAll(() => silent?.close());

/** The real pair, with S3 or DynamoDB moved to another endpoint (which gets short attempt bounds). */
function storesWith(endpoints: { s3?: string; dynamodb?: string }) {
  return awsStores({
    ...config,
    endpoints: { ...config.endpoints, ...endpoints },
    timeouts: { ...(endpoints.s3 ? { s3: quick } : {}), ...(endpoints.dynamodb ? { dynamodb: quick } : {}) },
  });
}

async function expectUnavailable(answer: Response) {
  expect(answer.status).toBe(503);
  expect(Number(answer.headers.get("Retry-After"))).toBeGreaterThan(0);
  expect(await answer.json()).toMatchObject({ code: "storage_unavailable" });
}

describe("the AWS pair, unreachable or silent", () => {
  it("an append whose S3 never answers is a 503 with Retry-After, and nothing is committed", async () => {
    const healthy = storesWith({});
    const token = await userToken(healthy, "alice");
    const app = makeApp(storesWith({ s3: silent.endpoint }));
    const started = performance.now();
    await expectUnavailable(await client(app, token).patch("s1", 0, header));
    expect(performance.now() - started).toBeLessThan(8_000);
    expect((await client(makeApp(healthy), token).head("s1")).status).toBe(404);
  }, 30_000);

  it("a DynamoDB on a port nothing listens on: every authenticated request is a 503, not a 401 or a 500", async () => {
    const healthy = storesWith({});
    const token = await userToken(healthy, "bob");
    const app = makeApp(storesWith({ dynamodb: dead }));
    await expectUnavailable(await client(app, token).get("/v1/sessions"));
    await expectUnavailable(await client(app, token).patch("s1", 0, header));
  }, 30_000);

  it("a stopped DynamoDB answers 503 within the attempts' bounds", async () => {
    const healthy = storesWith({});
    const token = await userToken(healthy, "carol");
    const app = makeApp(storesWith({ dynamodb: silent.endpoint }));
    const started = performance.now();
    await expectUnavailable(await client(app, token).get("/v1/sessions"));
    expect(performance.now() - started).toBeLessThan(8_000);
  }, 30_000);

  it("reading a session whose S3 is unreachable is a 503; the bytes are there once it is back", async () => {
    const healthy = storesWith({});
    const token = await userToken(healthy, "dave");
    const body = header + line(1);
    expect((await client(makeApp(healthy), token).patch("s1", 0, body)).ok).toBe(true);
    await expectUnavailable(await client(makeApp(storesWith({ s3: dead })), token).get("/v1/sessions/s1/raw"));
    const again = await client(makeApp(healthy), token).get("/v1/sessions/s1/raw");
    expect(await again.text()).toBe(body);
  }, 30_000);
});

describe("the embedded store on a full disk", () => {
  it("an append that finds no room is a 507 storage_full: no temp file, nothing committed; it lands once there is room", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pisync-full-"));
    const disk = await fullDisk(join(dir, "disk"));
    const stores = embeddedStores(disk.dir);
    try {
      const token = await userToken(stores, "erin");
      const app = makeApp(stores);
      expect((await client(app, token).patch("s1", 0, header)).ok).toBe(true);
      const offset = enc(header).length;
      const big = `${JSON.stringify({ type: "message", id: "m1", parentId: null, text: "x".repeat(100_000) })}\n`;
      await disk.fill();
      const refused = await client(app, token).patch("s1", offset, big);
      expect(refused.status).toBe(507);
      expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({ code: "storage_full", error: expect.stringMatching(/full/) });
      const files = readdirSync(join(disk.dir, "blobs"), { recursive: true }).map(String);
      expect(files.filter((name) => name.endsWith(".tmp"))).toEqual([]);
      expect(Number((await client(app, token).head("s1")).headers.get("Upload-Offset"))).toBe(offset);
      await disk.free();
      expect((await client(app, token).patch("s1", offset, big)).ok).toBe(true);
      expect(await (await client(app, token).get("/v1/sessions/s1/raw")).text()).toBe(header + big);
    } finally {
      stores.close();
      await disk.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
