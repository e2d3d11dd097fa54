/**
 * Writes whose answer is lost after DynamoDB applied them: a proxy in front of DynamoDB Local
 * forwards each request and, for the operation under test, destroys the connection instead of
 * passing the first answer back. The SDK then sends the same request again; the store must
 * recognise its own applied write instead of answering as if it had failed.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AwsStoresConfig, awsStores } from "../src/aws/index.js";

let config: AwsStoresConfig;
/** The DynamoDB write operations whose next answer (one, the first that comes) the proxy loses. */
let loseNext: string[] = [];
const WRITES = ["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"];
const lost: string[] = [];
/** The DynamoDB write operations whose next request the proxy answers as a transaction conflict, without forwarding it. */
let conflictNext: string[] = [];

const proxy = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", async () => {
    const target = String(request.headers["x-amz-target"] ?? "");
    const operation = target.split(".").pop() ?? "";
    if (conflictNext.includes(operation)) {
      // What DynamoDB answers a transaction that met another on the same item: cancelled, nothing applied.
      conflictNext = [];
      const type = "com.amazonaws.dynamodb.v20120810#TransactionCanceledException";
      const reasons = [{ Code: "TransactionConflict", Message: "Transaction is ongoing for the item" }];
      const answer = {
        __type: type,
        Message: "Transaction cancelled [TransactionConflict]",
        CancellationReasons: reasons,
      };
      return void response.writeHead(400, { "content-type": "application/x-amz-json-1.0" }).end(JSON.stringify(answer));
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name)),
    ) as Record<string, string>;
    const upstream = await fetch(`${config.endpoints?.dynamodb}${request.url}`, {
      method: request.method,
      headers,
      body: Buffer.concat(chunks),
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (loseNext.includes(operation)) {
      loseNext = [];
      lost.push(operation);
      return void request.socket.destroy(); // applied by DynamoDB; the answer never arrives
    }
    response.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "" }).end(body);
  });
});

beforeAll(async () => {
  config = await testAwsConfig();
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
});
afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

/** The test servers' pair, its DynamoDB reached through the proxy. */
function lossyStores() {
  const { port } = proxy.address() as AddressInfo;
  return awsStores({ ...config, endpoints: { ...config.endpoints, dynamodb: `http://127.0.0.1:${port}` } });
}

it("a sign-in link redeemed once, its answer lost, still signs in (and only once)", async () => {
  const { meta } = awsStores(config);
  const hash = randomUUID().replaceAll("-", "");
  const link = {
    hash,
    userId: "u-lost",
    next: "/",
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
  };
  await meta.putLoginLink(link);
  const lossy = lossyStores().meta;
  loseNext = WRITES;
  expect(await lossy.consumeLoginLink(hash)).toMatchObject({ hash, userId: "u-lost" });
  expect(lost).toHaveLength(1);
  // A second redemption, by anyone, finds nothing.
  expect(await meta.consumeLoginLink(hash)).toBeUndefined();
  expect(await lossy.consumeLoginLink(hash)).toBeUndefined();
});

it("a browser session signed out, its answer lost, is reported signed out", async () => {
  const { meta } = awsStores(config);
  const now = new Date().toISOString();
  const session = {
    hash: randomUUID().replaceAll("-", ""),
    id: randomUUID(),
    userId: `u-${randomUUID()}`,
    createdAt: now,
    lastUsedAt: now,
    userAgent: "test",
  };
  await meta.putBrowserSession(session);
  const lossy = lossyStores().meta;
  loseNext = WRITES;
  expect(await lossy.deleteBrowserSession(session.userId, session.id)).toBe(true);
  expect(lost).toHaveLength(2);
  expect(await meta.findBrowserSession(session.hash)).toBeUndefined();
  expect(await meta.deleteBrowserSession(session.userId, session.id)).toBe(false);
});

/** A live share link of a fresh user, stored directly (not through the proxy). */
async function putShare(prefix: string) {
  const share = {
    id: `${prefix}-${randomUUID()}`,
    userId: `u-${randomUUID()}`,
    sessionId: "s",
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
    maskSecrets: true,
  };
  await awsStores(config).meta.putShare(share);
  return share;
}

it("a share's view and download, their answers lost, are counted once each", async () => {
  const { meta } = awsStores(config);
  const share = await putShare("lost");
  const lossy = lossyStores().meta;
  const before = lost.length;
  loseNext = WRITES;
  await lossy.recordShareView(share.id, "2026-01-02T00:00:00.000Z");
  loseNext = WRITES;
  await lossy.recordShareDownload(share.id);
  expect(lost.length - before).toBe(2);
  expect(await meta.getShare(share.id)).toMatchObject({
    views: 1,
    downloads: 1,
    lastViewedAt: "2026-01-02T00:00:00.000Z",
  });
});

it("a share's view whose transaction met another's is tried again, and counted once", async () => {
  const { meta } = awsStores(config);
  const share = await putShare("conflict");
  conflictNext = ["TransactWriteItems"];
  await lossyStores().meta.recordShareView(share.id, "2026-01-02T00:00:00.000Z");
  expect(conflictNext).toEqual([]);
  expect(await meta.getShare(share.id)).toMatchObject({ views: 1 });
});
