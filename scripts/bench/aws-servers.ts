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
  const [startedDynamo, startedS3] = await Promise.allSettled([startDynamoDbLocal(), startS3rver(["pisync-bench"])]);
  if (startedDynamo.status === "rejected" || startedS3.status === "rejected") {
    // One may have started: it is stopped before the failure is thrown.
    await Promise.all([startedDynamo, startedS3].map((s) => (s.status === "fulfilled" ? s.value.stop() : undefined)));
    throw (startedDynamo.status === "rejected" ? startedDynamo : (startedS3 as PromiseRejectedResult)).reason;
  }
  const [dynamodb, s3] = [startedDynamo.value, startedS3.value];
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
