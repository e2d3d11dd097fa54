/**
 * Writes whose answer is lost after DynamoDB applied them: a proxy in front of DynamoDB Local
 * forwards each request and, for the operation under test, destroys the connection instead of
 * passing the first answer back. The SDK then sends the same request again; the store must
 * recognise its own applied write instead of answering as if it had failed.
 */
import { randomUUID } from "node:crypto";
import { type LossyDynamo, lossyDynamo, testAwsConfig, DYNAMO_WRITES as WRITES } from "@pisync/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AwsStoresConfig, awsStores } from "../src/aws/index.js";

let config: AwsStoresConfig;
let proxy: LossyDynamo;

beforeAll(async () => {
  config = await testAwsConfig();
  proxy = await lossyDynamo(config.endpoints?.dynamodb as string);
});
afterAll(() => proxy.close());

/** The test servers' pair, its DynamoDB reached through the proxy. */
function lossyStores() {
  return awsStores({ ...config, endpoints: { ...config.endpoints, dynamodb: proxy.endpoint } });
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
  proxy.loseNext(WRITES);
  expect(await lossy.consumeLoginLink(hash)).toMatchObject({ hash, userId: "u-lost" });
  expect(proxy.lost).toHaveLength(1);
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
  proxy.loseNext(WRITES);
  expect(await lossy.deleteBrowserSession(session.userId, session.id)).toBe(true);
  expect(proxy.lost).toHaveLength(2);
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
  const before = proxy.lost.length;
  proxy.loseNext(WRITES);
  await lossy.recordShareView(share.id, "2026-01-02T00:00:00.000Z");
  proxy.loseNext(WRITES);
  await lossy.recordShareDownload(share.id);
  expect(proxy.lost.length - before).toBe(2);
  expect(await meta.getShare(share.id)).toMatchObject({
    views: 1,
    downloads: 1,
    lastViewedAt: "2026-01-02T00:00:00.000Z",
  });
});

it("a share's view whose transaction met another's is tried again, and counted once", async () => {
  const { meta } = awsStores(config);
  const share = await putShare("conflict");
  proxy.conflictNext(["TransactWriteItems"]);
  await lossyStores().meta.recordShareView(share.id, "2026-01-02T00:00:00.000Z");
  expect(proxy.conflictPending()).toBe(false);
  expect(await meta.getShare(share.id)).toMatchObject({ views: 1 });
});
