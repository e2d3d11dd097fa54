/**
 * The AWS clients as the adapters configure them (client.ts), against a server that fails on
 * purpose: throttling, 5xx and dropped connections are retried (3 attempts in all); other errors
 * are not; every attempt is signed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AwsConnection, awsErrorName, dynamoClient } from "../src/aws/index.js";

type Step = (response: ServerResponse, request: IncomingMessage) => void;
let steps: Step[] = [];
let calls = 0;
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    const step = steps[calls++] ?? ((r: ServerResponse) => r.end("{}"));
    step(response, request);
  });
});
let connection: AwsConnection;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  connection = {
    region: "us-east-1",
    credentials: { accessKeyId: "a", secretAccessKey: "b" },
    endpoints: { dynamodb: `http://127.0.0.1:${port}` },
  };
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const error =
  (status: number, type: string): Step =>
  (response) => {
    response.writeHead(status, { "content-type": "application/x-amz-json-1.0" });
    response.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: type }));
  };
const ok: Step = (response) => {
  response.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
  response.end(JSON.stringify({ Item: { pk: { S: "x" } } }));
};
const drop: Step = (response) => response.socket?.destroy();

/** One GetItem through a fresh client (a fresh retry quota), with the server answering `script`. */
async function call(script: Step[]) {
  steps = script;
  calls = 0;
  const client = dynamoClient(connection);
  const result = await client
    .send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "x" } } }))
    .then((answer) => answer.Item)
    .catch((e: unknown) => e);
  client.destroy();
  return { result, calls };
}

it("retries throttling, 5xx and dropped connections, then answers", async () => {
  expect(await call([error(400, "ThrottlingException"), ok])).toEqual({ result: { pk: { S: "x" } }, calls: 2 });
  expect(await call([error(500, "InternalServerError"), drop, ok])).toEqual({ result: { pk: { S: "x" } }, calls: 3 });
  expect((await call([error(400, "ProvisionedThroughputExceededException"), ok])).calls).toBe(2);
});

it("gives up after three attempts, with the last error", async () => {
  const { result, calls } = await call([
    error(503, "ServiceUnavailable"),
    error(503, "ServiceUnavailable"),
    error(503, "ServiceUnavailable"),
    ok,
  ]);
  expect(calls).toBe(3);
  expect(awsErrorName(result)).toBe("ServiceUnavailable");
  expect((result as { $metadata: { attempts: number } }).$metadata.attempts).toBe(3);
});

it("takes another number of attempts from the connection", async () => {
  const saved = connection;
  connection = { ...connection, maxAttempts: 1 };
  try {
    const { result, calls } = await call([error(500, "InternalServerError"), ok]);
    expect(calls).toBe(1);
    expect(awsErrorName(result)).toBe("InternalServerError");
  } finally {
    connection = saved;
  }
});

it("does not retry a request the service refused for what it is", async () => {
  const { result, calls } = await call([error(400, "ValidationException"), ok]);
  expect(calls).toBe(1);
  expect(awsErrorName(result)).toBe("ValidationException");
  expect((result as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(400);
});

it("signs every attempt with SigV4 for the service and region", async () => {
  const seen: string[] = [];
  const capture: Step = (response, request) => {
    seen.push(String(request.headers.authorization));
    ok(response, request);
  };
  await call([capture]);
  await call([error(400, "ThrottlingException"), capture]);
  expect(seen).toHaveLength(2);
  for (const authorization of seen) {
    expect(authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=a\/\d{8}\/us-east-1\/dynamodb\/aws4_request, SignedHeaders=[a-z0-9;-]*\bx-amz-target\b[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
  }
});
