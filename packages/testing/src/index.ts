/**
 * `@pisync/testing`: what the tests of several packages share. The main entry holds what runs
 * inside vitest; the test servers, the end-to-end harness, the fixture corpora, the hostile
 * corpus and Lambda events have their own entries (`@pisync/testing/servers`, `/cli`,
 * `/fixtures`, `/pi1`, `/hostile`, `/lambda-events`), so scripts can load them without vitest.
 */
export { testAwsConfig, testAwsStores } from "./aws.js";
export { type FakeDynamo, fakeDynamo } from "./fake-dynamodb.js";
export { type FullDisk, fullDisk } from "./full-disk.js";
export { countingPages, withoutPersistedIndexes } from "./index-reads.js";
export { DYNAMO_WRITES, type LossyDynamo, lossyDynamo } from "./lossy-dynamodb.js";
export * from "./sessions.js";
export { describeOnEveryStore, openPair, type Pair, type PairName, STORE_NAMES } from "./stores.js";
