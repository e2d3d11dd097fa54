/** The AWS test servers for a benchmark: started, with a table made, and stopped after. */
import { type AwsStoresConfig, ensureTable } from "@pisync/store/aws";
import { type RunningServer, ServerStartError, startDynamoDbLocal, startS3rver } from "@pisync/testing/servers";

// The SDK warns on Node 20 that its 2027 releases will need Node 22; the versions here are pinned.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** Attempts at starting the servers: on a machine busy with other work, Java may not answer within a minute. */
const START_ATTEMPTS = 3;

/** Starts both servers (each attempt stops what it started before the next). */
async function startServers(): Promise<{ dynamodb: RunningServer; s3: RunningServer }> {
  for (let attempt = 1; ; attempt++) {
    const [startedDynamo, startedS3] = await Promise.allSettled([startDynamoDbLocal(), startS3rver(["pisync-bench"])]);
    if (startedDynamo.status === "fulfilled" && startedS3.status === "fulfilled") {
      return { dynamodb: startedDynamo.value, s3: startedS3.value };
    }
    // One may have started: it is stopped before the failure is thrown, or the next attempt.
    await Promise.all([startedDynamo, startedS3].map((s) => (s.status === "fulfilled" ? s.value.stop() : undefined)));
    const failure = (startedDynamo.status === "rejected" ? startedDynamo : (startedS3 as PromiseRejectedResult)).reason;
    if (!(failure instanceof ServerStartError) || attempt >= START_ATTEMPTS) throw failure;
    console.error(`the test servers did not start (${(failure as Error).message}): trying again`);
  }
}

/**
 * Runs `measure` against DynamoDB Local and s3rver (behind the SigV4 gate), with a config for
 * bucket and table `pisync-bench`, then stops both servers.
 */
export async function withAwsServers<T>(
  measure: (config: AwsStoresConfig, servers: { dynamodb: RunningServer; s3: RunningServer }) => Promise<T>,
): Promise<T> {
  const { dynamodb, s3 } = await startServers();
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
