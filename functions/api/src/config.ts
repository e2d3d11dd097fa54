/**
 * The one module that reads the environment. Everything else receives its settings.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { AwsConnection } from "@pisync/store/aws";

/** Where the one-machine server keeps its data by default: `$XDG_DATA_HOME/pisync` (~/.local/share/pisync). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PISYNC_DATA) return env.PISYNC_DATA;
  const base = env.XDG_DATA_HOME || join(homedir(), ".local", "share");
  return join(base, "pisync");
}

/**
 * Settings of the Lambda function, from its environment: pisync's own (set by the CDK stack)
 * and the runtime's (region, the role's credentials). `AWS_ENDPOINT_URL_<SERVICE>` points a
 * service elsewhere, as the AWS SDKs do (an S3-compatible server is then addressed path-style).
 * @throws Error naming the variables that are missing (the function then fails to start).
 */
export function lambdaConfig(env: NodeJS.ProcessEnv = process.env) {
  const bucket = env.PISYNC_BUCKET;
  const table = env.PISYNC_TABLE;
  if (!bucket || !table) throw new Error("PISYNC_BUCKET and PISYNC_TABLE must be set");
  const { AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN } = env;
  if (!AWS_REGION || !AWS_ACCESS_KEY_ID || !AWS_SECRET_ACCESS_KEY) {
    throw new Error("AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (Lambda sets them)");
  }
  const connection: AwsConnection = {
    region: AWS_REGION,
    credentials: {
      accessKeyId: AWS_ACCESS_KEY_ID,
      secretAccessKey: AWS_SECRET_ACCESS_KEY,
      sessionToken: AWS_SESSION_TOKEN,
    },
    endpoints: {
      s3: env.AWS_ENDPOINT_URL_S3,
      dynamodb: env.AWS_ENDPOINT_URL_DYNAMODB,
      secretsmanager: env.AWS_ENDPOINT_URL_SECRETS_MANAGER,
    },
    s3PathStyle: Boolean(env.AWS_ENDPOINT_URL_S3),
  };
  const maxShareDays = Number(env.PISYNC_MAX_SHARE_DAYS ?? 90);
  // The origin browsers use, when a proxy or custom domain hides it from the function.
  const publicUrl = env.PISYNC_PUBLIC_URL || undefined;
  // The scheduled search pass's time per invocation (ms); what is left waits for the next run.
  const indexBudgetMs = env.PISYNC_INDEX_BUDGET_MS ? Number(env.PISYNC_INDEX_BUDGET_MS) : undefined;
  if (indexBudgetMs !== undefined && !(Number.isInteger(indexBudgetMs) && indexBudgetMs > 0)) {
    throw new Error("PISYNC_INDEX_BUDGET_MS must be a positive number of milliseconds");
  }
  return {
    bucket,
    table,
    connection,
    shareKeySecret: env.PISYNC_SHARE_KEY_SECRET,
    maxShareDays,
    publicUrl,
    indexBudgetMs,
    // Set by Lambda: the scheduled pass invokes the function itself for the next one.
    functionName: env.AWS_LAMBDA_FUNCTION_NAME || undefined,
  };
}
