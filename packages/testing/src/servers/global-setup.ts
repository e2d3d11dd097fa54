/** vitest globalSetup: the storage servers every `npm test` runs against. */
import type { TestProject } from "vitest/node";
import { ServerStartError, startDynamoDbLocal, startS3rver } from "./servers.js";

export const TEST_BUCKET = "pisync-test";

declare module "vitest" {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    s3Endpoint: string;
    s3Bucket: string;
  }
}

export default async function setup(project: TestProject) {
  const started = await Promise.allSettled([startDynamoDbLocal(), startS3rver([TEST_BUCKET])]);
  const [dynamodb, s3] = started.map((s) => (s.status === "fulfilled" ? s.value : undefined));
  if (!dynamodb || !s3) {
    // One could not start: stop the other, or its process outlives the run and holds vitest open.
    await Promise.all([dynamodb?.stop(), s3?.stop()]);
    const reason = (started.find((s) => s.status === "rejected") as PromiseRejectedResult).reason;
    if (!(reason instanceof ServerStartError)) throw reason;
    // vitest reports a thrown error under "No test files found" and its include list, which
    // reads as the cause: the one line alone says what the machine lacks.
    process.stderr.write(`${reason.message}\n`);
    process.exit(1);
  }
  project.provide("dynamodbEndpoint", dynamodb.endpoint);
  project.provide("s3Endpoint", s3.endpoint);
  project.provide("s3Bucket", TEST_BUCKET);
  return async () => {
    await Promise.all([dynamodb.stop(), s3.stop()]);
  };
}
