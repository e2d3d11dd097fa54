/** Clients for the test servers the harness started (DynamoDB Local and s3rver). */
import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { inject } from "vitest";
import { type AwsStoresConfig, awsStores, ensureTable } from "../src/aws/index.js";

/** A config for the test servers, with a fresh table. */
export async function testAwsConfig(): Promise<AwsStoresConfig> {
  const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
  const config: AwsStoresConfig = {
    bucket: inject("s3Bucket"),
    table: `pisync-${randomUUID()}`,
    s3: {
      endpoint: inject("s3Endpoint"),
      region: "us-east-1",
      forcePathStyle: true,
      credentials,
      // s3rver stores aws-chunked framing verbatim unless checksums are only sent when required.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    },
    dynamodb: { endpoint: inject("dynamodbEndpoint"), region: "us-east-1", credentials },
  };
  await ensureTable(new DynamoDBClient(config.dynamodb ?? {}), config.table);
  return config;
}

export async function testAwsStores() {
  return awsStores(await testAwsConfig());
}
