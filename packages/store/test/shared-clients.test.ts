/**
 * A connection that shares its clients (`AwsConnection.shared`, as the Lambda function makes
 * it): every store made from it, or from a copy of it, talks to DynamoDB through one client,
 * so the function resolves its settings and opens its connection once, not once per store.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AwsConnection, DynamoMetaStore, documentClient } from "../src/aws/index.js";

describe("clients shared by a connection", () => {
  let server: Server;
  let sockets = 0;
  let endpoint: string;

  beforeAll(async () => {
    // Answers every DynamoDB call with an empty item: a head that is not there.
    server = createServer((request, response) => {
      request.resume();
      request.on("end", () => response.end("{}"));
    });
    server.on("connection", () => {
      sockets++;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connection = (shared?: AwsConnection["shared"]): AwsConnection => ({
    region: "us-east-1",
    credentials: { accessKeyId: "AKID", secretAccessKey: "SECRET" },
    endpoints: { dynamodb: endpoint },
    ...(shared ? { shared } : {}),
  });

  /** Sockets opened by two stores, each made from its own copy of `base`, reading a head each. */
  async function socketsOfTwoStores(base: AwsConnection): Promise<number> {
    const before = sockets;
    for (const store of [new DynamoMetaStore({ ...base }, "t"), new DynamoMetaStore({ ...base }, "t")]) {
      expect(await store.getHead("u", "s")).toBeUndefined();
    }
    return sockets - before;
  }

  it("gives every copy of a sharing connection the same DynamoDB client", () => {
    const sharing = connection({});
    expect(documentClient({ ...sharing })).toBe(documentClient(sharing));
    const own = connection();
    expect(documentClient(own)).not.toBe(documentClient(own));
  });

  it("opens one connection for two stores that share, two for stores that do not", async () => {
    expect(await socketsOfTwoStores(connection({}))).toBe(1);
    expect(await socketsOfTwoStores(connection())).toBe(2);
  });
});
