/** Clients for the test servers the harness started (DynamoDB Local and s3rver). */
import { randomUUID } from "node:crypto";
import { type AwsStoresConfig, awsStores, ensureTable } from "@pisync/store/aws";
import { inject } from "vitest";

/** A config for the test servers, with a fresh table. */
export async function testAwsConfig(): Promise<AwsStoresConfig> {
  const config: AwsStoresConfig = {
    bucket: inject("s3Bucket"),
    table: `pisync-${randomUUID()}`,
    region: "us-east-1",
    // s3rver checks signatures against these; DynamoDB Local takes any.
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    endpoints: { s3: inject("s3Endpoint"), dynamodb: inject("dynamodbEndpoint") },
    s3PathStyle: true,
  };
  await ensureTable(config, config.table);
  return config;
}

export async function testAwsStores() {
  return awsStores(await testAwsConfig());
}
