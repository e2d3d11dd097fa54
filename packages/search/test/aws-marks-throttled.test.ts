/**
 * Marking many sessions (a rebuild) against a DynamoDB that leaves items of a batch unprocessed,
 * as a throttled table does inside a 200: they are sent again a bounded number of times, then the
 * marking fails as `StorageUnavailableError` (a 503), never running until the invocation ends.
 */
import { StorageUnavailableError } from "@pisync/store";
import { type FakeDynamo, fakeDynamo } from "@pisync/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SearchMarks } from "../src/aws/marks.js";

/** Answers left to leave everything unprocessed; after them, everything is processed. */
let throttled = 0;
let calls = 0;
let dynamo: FakeDynamo;
let marks: SearchMarks;

beforeAll(async () => {
  dynamo = await fakeDynamo((_, body) => {
    calls++;
    return { UnprocessedItems: throttled-- > 0 ? body.RequestItems : {} };
  });
  marks = new SearchMarks(dynamo.connection, "table");
});
afterAll(() => dynamo.close());

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
