/** The AWS adapters: S3 for bytes, DynamoDB for metadata. */
import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import type { Stores } from "../ports.js";
import { DynamoMetaStore } from "./dynamo-meta-store.js";
import { S3BlobStore } from "./s3-blob-store.js";

export { ensureTable, TABLE_KEYS, TTL_ATTRIBUTE } from "./table.js";
export { DynamoMetaStore, S3BlobStore };

export interface AwsStoresConfig {
  bucket: string;
  table: string;
  s3?: S3ClientConfig;
  dynamodb?: DynamoDBClientConfig;
}

/** Both ports on one bucket and one table. */
export function awsStores(config: AwsStoresConfig): Stores {
  const s3 = new S3Client(config.s3 ?? {});
  const dynamodb = new DynamoDBClient(config.dynamodb ?? {});
  return { blobs: new S3BlobStore(s3, config.bucket), meta: new DynamoMetaStore(dynamodb, config.table) };
}
