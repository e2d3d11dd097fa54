/**
 * The search adapter's conditional writes whose answer is lost after DynamoDB applied them (a
 * proxy in front of DynamoDB Local destroys the connection instead of passing the answer back;
 * the SDK sends the same write again, which fails its own condition): the pointer's move and the
 * pass chain's start and claim are recognised as applied, not taken for another writer's.
 */
import type { AwsStoresConfig } from "@pisync/store/aws";
import { DYNAMO_WRITES, type LossyDynamo, lossyDynamo, testAwsConfig } from "@pisync/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PassChain } from "../src/aws/chain.js";
import { type Pointer, Pointers } from "../src/aws/pointers.js";

let config: AwsStoresConfig;
let proxy: LossyDynamo;
/** The test servers' DynamoDB, and the same through the proxy. */
let direct: AwsStoresConfig;
let lossy: AwsStoresConfig;

beforeAll(async () => {
  config = await testAwsConfig();
  proxy = await lossyDynamo(config.endpoints?.dynamodb as string);
  direct = config;
  lossy = { ...config, endpoints: { ...config.endpoints, dynamodb: proxy.endpoint } };
});
afterAll(() => proxy.close());

const pointer = (rev: number, keys: string[]): Pointer => ({
  rev,
  epoch: "e1",
  log: keys.map((key, i) => ({ seq: i + 1, key, bytes: 10 })),
  retired: [],
});

it("a pointer's move whose answer was lost is reported as moved, and the pointer holds it", async () => {
  const pointers = new Pointers(lossy, config.table);
  const first = pointer(1, ["a"]);
  proxy.loseNext(DYNAMO_WRITES);
  expect(await pointers.move("mover", undefined, first)).toBe(true);
  const second = pointer(2, ["a", "b"]);
  proxy.loseNext(DYNAMO_WRITES);
  expect(await pointers.move("mover", first, second)).toBe(true);
  expect(proxy.lost).toEqual(["PutItem", "PutItem"]);
  expect(await new Pointers(direct, config.table).get("mover")).toEqual(second);
  // Another writer's move from the same revision is still refused.
  expect(await pointers.move("mover", first, pointer(2, ["a", "c"]))).toBe(false);
  expect(await pointers.get("mover")).toEqual(second);
});

it("a chain's start and claim whose answers were lost hold the lease; a second delivery of the link is refused", async () => {
  const chain = new PassChain(lossy, config.table);
  const before = proxy.lost.length;
  proxy.loseNext(DYNAMO_WRITES);
  const link = await chain.start();
  expect(link).toMatchObject({ seq: 1 });
  expect(await chain.start()).toBeUndefined();
  const next = { chain: link?.chain as string, seq: 2 };
  proxy.loseNext(DYNAMO_WRITES);
  expect(await chain.claim(next)).toBe(true);
  expect(proxy.lost.length - before).toBe(2);
  expect(await chain.claim(next)).toBe(false);
  expect(await chain.claim({ ...next, seq: 3 })).toBe(true);
});
