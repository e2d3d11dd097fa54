/**
 * Marking many sessions (a rebuild) against a DynamoDB that leaves items of a batch unprocessed,
 * as a throttled table does inside a 200: they are sent again a bounded number of times, then the
 * marking fails as `StorageUnavailableError` (a 503), never running until the invocation ends.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { StorageUnavailableError } from "@pisync/store";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SearchMarks } from "../src/aws/marks.js";

/** Answers left to leave everything unprocessed; after them, everything is processed. */
let throttled = 0;
let calls = 0;
const server = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk) => {
    body += chunk;
  });
  request.on("end", () => {
    calls++;
    const { RequestItems } = JSON.parse(body) as { RequestItems: Record<string, unknown[]> };
    response.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
    response.end(JSON.stringify({ UnprocessedItems: throttled-- > 0 ? RequestItems : {} }));
  });
});
let marks: SearchMarks;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  marks = new SearchMarks(
    {
      region: "us-east-1",
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
      endpoints: { dynamodb: `http://127.0.0.1:${port}` },
    },
    "table",
  );
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it("sends a batch's unprocessed marks again until they are written", async () => {
  throttled = 2;
  calls = 0;
  await marks.markMany("u", ["s1", "s2"]);
  expect(calls).toBe(3);
});

it("fails as StorageUnavailableError when they are still unprocessed after eight sendings", async () => {
  throttled = Number.POSITIVE_INFINITY;
  calls = 0;
  await expect(marks.markMany("u", ["s1", "s2"])).rejects.toThrow(StorageUnavailableError);
  expect(calls).toBe(8);
}, 20_000);
