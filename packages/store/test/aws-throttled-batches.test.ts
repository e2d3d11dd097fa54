/**
 * A session's delete against a DynamoDB that leaves a batch's items unprocessed, as a throttled
 * table does inside a 200: they are sent again a bounded number of times, then the delete fails
 * as `StorageUnavailableError` (a 503: the client tries again), not as an unexplained error.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DynamoMetaStore } from "../src/aws/index.js";
import { StorageUnavailableError } from "../src/index.js";

let batchWrites = 0;
/** Answers by operation: the session has no head and no shares, one item of its own, and the table processes no batch. */
const server = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk) => {
    body += chunk;
  });
  request.on("end", () => {
    const operation = String(request.headers["x-amz-target"]).split(".").pop();
    const answers: Record<string, () => unknown> = {
      // The item keys of the session (asked for as keys only); no share.
      Query: () =>
        (JSON.parse(body) as { ProjectionExpression?: string }).ProjectionExpression === "pk, sk"
          ? { Items: [{ pk: { S: "S#u#s" }, sk: { S: "page#0" } }], Count: 1 }
          : { Items: [], Count: 0 },
      GetItem: () => ({}),
      TransactWriteItems: () => ({}),
      BatchWriteItem: () => {
        batchWrites++;
        return { UnprocessedItems: (JSON.parse(body) as { RequestItems: unknown }).RequestItems };
      },
    };
    response.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
    response.end(JSON.stringify(answers[operation ?? ""]?.() ?? {}));
  });
});
let meta: DynamoMetaStore;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  meta = new DynamoMetaStore(
    {
      region: "us-east-1",
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
      endpoints: { dynamodb: `http://127.0.0.1:${port}` },
    },
    "table",
  );
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it("a delete whose batch stays unprocessed after eight sendings is StorageUnavailableError", async () => {
  await expect(meta.deleteSession("u", "s", "2026-01-01T00:00:00.000Z")).rejects.toThrow(StorageUnavailableError);
  expect(batchWrites).toBe(8);
}, 30_000);
