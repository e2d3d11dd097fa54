/**
 * The AWS clients as the adapters configure them (client.ts), against a server that fails on
 * purpose: throttling, 5xx and dropped connections are retried (3 attempts in all); other errors
 * are not; every attempt is signed; what still fails after the retries because the service was
 * unreachable, silent or busy is `StorageUnavailableError`, within a bounded time.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type AwsConnection,
  awsErrorName,
  DEFAULT_TIMEOUTS,
  DynamoMetaStore,
  dynamoClient,
  ensureTable,
  s3Client,
} from "../src/aws/index.js";
import { StorageUnavailableError } from "../src/index.js";

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
  expect(result).toBeInstanceOf(StorageUnavailableError);
  const cause = (result as Error).cause;
  expect(awsErrorName(cause)).toBe("ServiceUnavailable");
  expect((cause as { $metadata: { attempts: number } }).$metadata.attempts).toBe(3);
});

it("takes another number of attempts from the connection", async () => {
  const saved = connection;
  connection = { ...connection, maxAttempts: 1 };
  try {
    const { result, calls } = await call([error(500, "InternalServerError"), ok]);
    expect(calls).toBe(1);
    expect(result).toBeInstanceOf(StorageUnavailableError);
    expect(awsErrorName((result as Error).cause)).toBe("InternalServerError");
  } finally {
    connection = saved;
  }
});

it("does not retry a request the service refused for what it is", async () => {
  const { result, calls } = await call([error(400, "ValidationException"), ok]);
  expect(calls).toBe(1);
  expect(result).not.toBeInstanceOf(StorageUnavailableError);
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

it("throttling that outlasts the retries is StorageUnavailableError, carrying the SDK's error", async () => {
  const { result, calls } = await call(Array(3).fill(error(400, "ThrottlingException")));
  expect(calls).toBe(3);
  expect(result).toBeInstanceOf(StorageUnavailableError);
  expect(awsErrorName((result as Error).cause)).toBe("ThrottlingException");
});

/** A TCP server that takes connections and never answers: a stopped (SIGSTOPped) server, as a client sees it. */
async function silentServer() {
  const sockets: Socket[] = [];
  const server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on (one just released). */
async function deadEndpoint() {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

async function timed<T>(run: () => Promise<T>): Promise<{ result: T | unknown; seconds: number }> {
  const started = performance.now();
  const result = await run().catch((e: unknown) => e);
  return { result, seconds: (performance.now() - started) / 1000 };
}

it("a DynamoDB that accepts and never answers is StorageUnavailableError within the default bounds", async () => {
  const silent = await silentServer();
  const client = dynamoClient({ ...connection, endpoints: { dynamodb: silent.endpoint } });
  try {
    const { result, seconds } = await timed(() =>
      client.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "x" } } })),
    );
    expect(result).toBeInstanceOf(StorageUnavailableError);
    expect((result as Error).cause).toMatchObject({ name: "TimeoutError" });
    // Three attempts of `requestMs` each and the backoff between them; never the 15 s of a Lambda.
    const { idleMs } = DEFAULT_TIMEOUTS.dynamodb;
    expect(seconds).toBeGreaterThanOrEqual((3 * idleMs) / 1000 - 0.2);
    expect(seconds).toBeLessThan((3 * idleMs) / 1000 + 3);
  } finally {
    client.destroy();
    await silent.close();
  }
}, 30_000);

it("an S3 whose port nothing listens on is StorageUnavailableError (connection refused), at once", async () => {
  const client = s3Client({ ...connection, endpoints: { s3: await deadEndpoint() }, s3PathStyle: true });
  try {
    const { GetObjectCommand } = await import("@aws-sdk/client-s3");
    const { result, seconds } = await timed(() => client.send(new GetObjectCommand({ Bucket: "b", Key: "k" })));
    expect(result).toBeInstanceOf(StorageUnavailableError);
    expect(JSON.stringify((result as Error).cause)).toContain("ECONNREFUSED");
    expect(seconds).toBeLessThan(5);
  } finally {
    client.destroy();
  }
}, 30_000);

it("attempt bounds come from the connection when given", async () => {
  const silent = await silentServer();
  const client = dynamoClient({
    ...connection,
    maxAttempts: 1,
    endpoints: { dynamodb: silent.endpoint },
    timeouts: { dynamodb: { connectMs: 200, idleMs: 300, requestMs: 300 } },
  });
  try {
    const { result, seconds } = await timed(() =>
      client.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "x" } } })),
    );
    expect(result).toBeInstanceOf(StorageUnavailableError);
    expect(seconds).toBeLessThan(2);
  } finally {
    client.destroy();
    await silent.close();
  }
});

it("a conditional create whose answer was lost is recognised when the SDK's retry meets its own item", async () => {
  let written: unknown;
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      bodies.push(body);
      const n = bodies.length;
      if (n === 1) {
        written = JSON.parse(body).Item; // applied; then the answer is lost
        response.socket?.destroy();
      } else if (n === 2) error(400, "ConditionalCheckFailedException")(response, request);
      else {
        response.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
        response.end(JSON.stringify({ Item: written }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const meta = new DynamoMetaStore({ ...connection, endpoints: { dynamodb: endpoint } }, "t");
    const token = {
      hash: "a".repeat(64),
      userId: "u",
      id: "t1",
      name: "laptop",
      createdAt: "2026-01-01T00:00:00.000Z",
    };
    await expect(meta.putToken(token)).resolves.toBeUndefined();
    expect(bodies).toHaveLength(3);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

it("creating the table (set-up, off every request's path) waits for a DynamoDB slower than a request's bounds", async () => {
  const slowMs = DEFAULT_TIMEOUTS.dynamodb.idleMs + 1500;
  const slow: Step = (response) =>
    setTimeout(() => {
      response.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
      response.end(JSON.stringify({ TableDescription: { TableName: "t", TableStatus: "CREATING" } }));
    }, slowMs);
  steps = [slow, slow, slow];
  calls = 0;
  await expect(ensureTable(connection, "t")).resolves.toBeUndefined();
  expect(calls).toBe(1);
}, 30_000);
