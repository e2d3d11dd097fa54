/**
 * The app (the Node server) as a restartable process, `npm start`'s command without npm: on the
 * embedded store, or on the AWS stores (`--store aws` on the given storage endpoints), on a
 * fixed port.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "@pisync/testing/servers";
import { Restartable, untilResponds } from "./process.js";

/** The repository's root (scripts run from it, tsx resolves from it). */
export const REPO_ROOT = join(import.meta.dirname, "..", "..");

const TSX = ["--conditions=source", "--import", "tsx"];

/** Where the app of the AWS pair stores, as `npm start -- --store aws` takes it (SDK settings). */
export interface AwsSettings {
  dynamodbEndpoint: string;
  s3Endpoint: string;
  bucket: string;
  table: string;
}

/** The SDK's standard settings for `settings` (s3rver checks signatures made with these). */
export function awsEnvironment(settings: AwsSettings): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    AWS_ENDPOINT_URL_S3: settings.s3Endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: settings.dynamodbEndpoint,
    PISYNC_BUCKET: settings.bucket,
    PISYNC_TABLE: settings.table,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
}

export interface AppProcess extends Restartable {
  url: string;
  /** The local user's bearer token (read once the app has started). */
  token(): string;
}

/**
 * The app on `dataDir` (embedded), or on `aws` with `dataDir` for its token and share keys. With
 * `enospcFlag`, the embedded app's file writes fail with ENOSPC while that file exists
 * (`enospc.mjs`).
 */
export async function appProcess(dataDir: string, aws?: AwsSettings, enospcFlag?: string): Promise<AppProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const preload = enospcFlag ? ["--import", join(REPO_ROOT, "scripts", "faults", "enospc.mjs")] : [];
  const store = aws ? ["--store", "aws", "--create"] : [];
  const args = [...TSX, ...preload, join(REPO_ROOT, "scripts", "start.ts"), "--no-watch", ...store];
  args.push("--data", dataDir, "--port", String(port));
  const app = new Restartable({
    name: aws ? "app (aws)" : "app (embedded)",
    command: process.execPath,
    args,
    cwd: REPO_ROOT,
    env: aws ? awsEnvironment(aws) : { ...process.env, PISYNC_FAULTS_ENOSPC: enospcFlag },
    logFile: `${dataDir}.app.log`,
    ready: (child) => untilResponds(`${url}/healthz`, child, "the app", 120_000),
  });
  return Object.assign(app, {
    url,
    token: () => readFileSync(join(dataDir, "local-token"), "utf8").trim(),
  });
}
