/** The AWS adapters: S3 for bytes, DynamoDB for metadata, on the AWS SDK v3 (client.ts). */
import type { Stores } from "../ports.js";
import type { AwsConnection } from "./client.js";
import { type CommitItems, DynamoMetaStore } from "./dynamo-meta-store.js";
import { DynamoTeamStore } from "./dynamo-team-store.js";
import { S3BlobStore } from "./s3-blob-store.js";

export { ensureBucket } from "./bucket.js";
export {
  type AttemptTimeouts,
  type AwsConnection,
  type AwsCredentials,
  awsErrorName,
  DEFAULT_TIMEOUTS,
  documentClient,
  dynamoClient,
  isUnavailable,
  type SharedClients,
  s3Client,
  secretsClient,
  untilProcessed,
} from "./client.js";
export { readSecretString } from "./secrets.js";
export { ensureTable } from "./table.js";
export { type CommitItems, DynamoMetaStore, DynamoTeamStore, S3BlobStore };

export interface AwsStoresConfig extends AwsConnection {
  bucket: string;
  table: string;
  /** Items every commit puts in its own transaction (see {@link CommitItems}). */
  commitItems?: CommitItems;
}

/** Both ports on one bucket and one table. */
export function awsStores(config: AwsStoresConfig): Stores {
  return {
    blobs: new S3BlobStore(config, config.bucket),
    meta: new DynamoMetaStore(config, config.table, config.commitItems),
    teams: new DynamoTeamStore(config, config.table),
  };
}
