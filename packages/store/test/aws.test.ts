import { randomUUID } from "node:crypto";
import { type AddressInfo, createServer } from "node:net";
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { testAwsConfig, testAwsStores } from "@pisync/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { awsErrorName, awsStores, documentClient } from "../src/aws/index.js";
import {
  changedUsageDays,
  NotFoundError,
  RevisionConflictError,
  type SessionHead,
  type Stores,
  type UsageRow,
} from "../src/index.js";
import { describeStoreContract, head } from "./contract.js";

/** The test servers' pair, both moved to a port nothing listens on (connection refused). */
async function unreachableAwsStores() {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const dead = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const config = await testAwsConfig();
  return awsStores({ ...config, endpoints: { s3: dead, dynamodb: dead } });
}

describeStoreContract("AWS (S3 on s3rver + DynamoDB Local)", testAwsStores, unreachableAwsStores);

describe("S3 signatures (checked in front of s3rver by the AWS SDK's own signer)", () => {
  let stores: Stores;
  beforeAll(async () => {
    stores = await testAwsStores();
  });

  it("takes a PUT of exactly the signed length, and refuses another length or a tampered URL", async () => {
    const key = `uploads/${randomUUID()}`;
    const body = new TextEncoder().encode('{"type":"message","big":true}\n');
    const url = await stores.blobs.uploadUrl(key, 900, body.length);
    expect(url).toMatch(/X-Amz-Signature=/);
    const longer = await fetch(url as string, { method: "PUT", body: new Uint8Array([...body, 0x20]) });
    expect(longer.status).toBe(403);
    const tampered = await fetch((url as string).replace(key, `${key}-other`), { method: "PUT", body });
    expect(tampered.status).toBe(403);
    await expect(stores.blobs.get(key)).rejects.toBeInstanceOf(NotFoundError);
    const exact = await fetch(url as string, { method: "PUT", body });
    expect(exact.status).toBe(200);
    expect([...(await stores.blobs.get(key))]).toEqual([...body]);
  });

  it("an expired presigned URL is refused", async () => {
    const key = `uploads/${randomUUID()}`;
    const url = await stores.blobs.uploadUrl(key, 1, 1);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const late = await fetch(url as string, { method: "PUT", body: new Uint8Array([1]) });
    expect(late.status).toBe(403);
    expect(await late.text()).toContain("expired");
  });

  it("lists past a page of 1,000 keys (continuation tokens signed in the query)", async () => {
    const prefix = `t/${randomUUID()}/`;
    const keys = Array.from({ length: 1005 }, (_, i) => `${prefix}${String(i).padStart(4, "0")}`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map((key) => stores.blobs.put(key, new Uint8Array([1]))));
    }
    expect(await stores.blobs.list(prefix)).toEqual(keys);
    await stores.blobs.delete(keys);
    expect(await stores.blobs.list(prefix)).toEqual([]);
  });

  it("refuses requests signed with the wrong secret", async () => {
    const config = await testAwsConfig();
    const wrong = awsStores({ ...config, credentials: { accessKeyId: "S3RVER", secretAccessKey: "wrong" } });
    const error = await wrong.blobs.put(`t/${randomUUID()}`, new Uint8Array([1])).catch((e) => e);
    expect(awsErrorName(error)).toBe("SignatureDoesNotMatch");
  });
});

describe("items put with every commit (commitItems)", () => {
  it("are written by an applied commit and by no refused one, in the same transaction", async () => {
    const config = await testAwsConfig();
    const withMark = awsStores({
      ...config,
      commitItems: (commit) => [
        { pk: `X#${commit.head.userId}`, sk: `D#${commit.head.sessionId}`, token: commit.token },
      ],
    });
    const user = `u-${randomUUID()}`;
    const read = documentClient(config);
    const markOf = async () =>
      (await read.send(new GetCommand({ TableName: config.table, Key: { pk: `X#${user}`, sk: "D#s" } }))).Item?.token;
    await withMark.meta.commit({
      head: head(user, "s", 1, "2026-01-01T00:00:00.000Z"),
      expectedRevision: null,
      token: "first",
    });
    expect(await markOf()).toBe("first");
    await expect(
      withMark.meta.commit({
        head: head(user, "s", 2, "2026-01-01T00:00:01.000Z"),
        expectedRevision: 7,
        token: "refused",
      }),
    ).rejects.toBeInstanceOf(RevisionConflictError);
    expect(await markOf()).toBe("first");
  });
});

describe("insights' usage by day on DynamoDB: what a crash or an upgrade leaves", () => {
  const row = (day: string, cost: number): UsageRow => [day, "m/x", "dev1", 10, 5, 0, 0, cost, 100, 1];
  const withUsage = (user: string, id: string, revision: number, rows: UsageRow[]): SessionHead => {
    const h = head(user, id, revision, `2026-01-0${revision}T00:00:00.000Z`);
    return { ...h, summary: { ...h.summary, cwd: "/w", usage: { rows, tools: [] } } };
  };
  /** The user's items under a key prefix (their keys). */
  async function keysOf(config: Awaited<ReturnType<typeof testAwsConfig>>, user: string, prefix: string) {
    const read = documentClient(config);
    const found = await read.send(
      new QueryCommand({
        TableName: config.table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": `U#${user}`, ":prefix": prefix },
        ProjectionExpression: "pk, sk",
        ConsistentRead: true,
      }),
    );
    return found.Items ?? [];
  }
  async function remove(config: Awaited<ReturnType<typeof testAwsConfig>>, keys: Record<string, unknown>[]) {
    const write = documentClient(config);
    for (const Key of keys) await write.send(new DeleteCommand({ TableName: config.table, Key }));
  }

  it("a commit whose days were never written (the process stopped after its transaction) is settled by the next report", async () => {
    const config = await testAwsConfig();
    const stores = awsStores(config);
    const user = `u-${randomUUID()}`;
    const first = withUsage(user, "a", 1, [row("2025-01-01", 1)]);
    await stores.meta.commit({ head: first, expectedRevision: null, usageDays: changedUsageDays(undefined, first) });
    const next = withUsage(user, "a", 2, [row("2025-01-01", 1), row("2025-01-02", 2)]);
    await stores.meta.commit({ head: next, expectedRevision: 1, usageDays: changedUsageDays(first, next) });
    expect(await keysOf(config, user, "UM#")).toEqual([]);
    // What a stop between the transaction and the day writes leaves: the mark, and the days as before.
    await remove(config, await keysOf(config, user, "UD#2025-01-02"));
    await documentClient(config).send(
      new UpdateCommand({
        TableName: config.table,
        Key: { pk: `U#${user}`, sk: "UM#a" },
        UpdateExpression: "SET revision = :r ADD days :d",
        ExpressionAttributeValues: { ":r": 2, ":d": new Set(["2025-01-02"]) },
      }),
    );
    const usage = await awsStores(config).meta.listUsage(user, { from: "2025-01-01", to: "2025-01-31" });
    expect(usage.sessions).toEqual([
      { sessionId: "a", cwd: "/w", rows: [row("2025-01-01", 1), row("2025-01-02", 2)], tools: [] },
    ]);
    expect(await keysOf(config, user, "UM#")).toEqual([]);
  });

  it("heads committed before usage was kept by day are filed by the user's first report, or by the repair pass", async () => {
    const config = await testAwsConfig();
    const stores = awsStores(config);
    const user = `u-${randomUUID()}`;
    for (const id of ["a", "b"]) {
      const h = withUsage(user, id, 1, [row(`2025-05-0${id === "a" ? 1 : 2}`, 3)]);
      await stores.meta.commit({ head: h, expectedRevision: null, usageDays: changedUsageDays(undefined, h) });
    }
    // As a table from before: heads, and no days, marks or filled flag.
    await remove(config, [...(await keysOf(config, user, "UD#")), ...(await keysOf(config, user, "UR"))]);
    expect(
      (await awsStores(config).meta.listUsage(user, { from: "2025-05-01", to: "2025-05-31" })).sessions
        .map((s) => s.sessionId)
        .sort(),
    ).toEqual(["a", "b"]);
    expect(await keysOf(config, user, "UR")).toHaveLength(1);
    expect((await keysOf(config, user, "UD#")).length).toBe(2);
    // Or by the repair pass (`verify --deep --repair`), before any report.
    await remove(config, [...(await keysOf(config, user, "UD#")), ...(await keysOf(config, user, "UR"))]);
    await awsStores(config).meta.fillCardList(user);
    expect(await keysOf(config, user, "UR")).toHaveLength(1);
    expect((await keysOf(config, user, "UD#")).length).toBe(2);
  });
});
