/**
 * A session's delete against a DynamoDB that leaves a batch's items unprocessed, as a throttled
 * table does inside a 200: they are sent again a bounded number of times, then the delete fails
 * as `StorageUnavailableError` (a 503: the client tries again), not as an unexplained error.
 */
import { type FakeDynamo, fakeDynamo } from "@pisync/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DynamoMetaStore } from "../src/aws/index.js";
import { StorageUnavailableError } from "../src/index.js";

let batchWrites = 0;
let dynamo: FakeDynamo;
let meta: DynamoMetaStore;

beforeAll(async () => {
  // The session has no head and no shares, one item of its own, and the table processes no batch.
  dynamo = await fakeDynamo((operation, body) => {
    // The item keys of the session (asked for as keys only); no share.
    if (operation === "Query") {
      return body.ProjectionExpression === "pk, sk"
        ? { Items: [{ pk: { S: "S#u#s" }, sk: { S: "page#0" } }], Count: 1 }
        : { Items: [], Count: 0 };
    }
    if (operation === "BatchWriteItem") {
      batchWrites++;
      return { UnprocessedItems: body.RequestItems };
    }
    return {};
  });
  meta = new DynamoMetaStore(dynamo.connection, "table");
});
afterAll(() => dynamo.close());

it("a delete whose batch stays unprocessed after eight sendings is StorageUnavailableError", async () => {
  await expect(meta.deleteSession("u", "s", "2026-01-01T00:00:00.000Z")).rejects.toThrow(StorageUnavailableError);
  expect(batchWrites).toBe(8);
}, 30_000);
