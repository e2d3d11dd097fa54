/** The AWS test servers for a benchmark: started, with a table made, and stopped after. */
import { type AwsStoresConfig, ensureTable } from "@pisync/store/aws";
import { type RunningServer, startDynamoDbLocal, startS3rver } from "@pisync/testing/servers";

// The SDK warns on Node 20 that its 2027 releases will need Node 22; the versions here are pinned.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/**
 * Runs `measure` against DynamoDB Local and s3rver (behind the SigV4 gate), with a config for
 * bucket and table `pisync-bench`, then stops both servers.
 */
export async function withAwsServers<T>(
  measure: (config: AwsStoresConfig, servers: { dynamodb: RunningServer; s3: RunningServer }) => Promise<T>,
): Promise<T> {
  const [dynamodb, s3] = await Promise.all([startDynamoDbLocal(), startS3rver(["pisync-bench"])]);
  try {
    const config: AwsStoresConfig = {
      bucket: "pisync-bench",
      table: "pisync-bench",
      region: "us-east-1",
      // s3rver's gate checks signatures with these; DynamoDB Local takes any.
      credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
      endpoints: { s3: s3.endpoint, dynamodb: dynamodb.endpoint },
      s3PathStyle: true,
    };
    await ensureTable(config, config.table);
    return await measure(config, { dynamodb, s3 });
  } finally {
    await Promise.all([dynamodb.stop(), s3.stop()]);
  }
}
