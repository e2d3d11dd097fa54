/**
 * `npm run aws-local -- [--data DIR] [npm start's flags]`: the AWS store pair on this machine.
 * Starts DynamoDB Local (on disk) and s3rver (behind a SigV4 check) on free loopback ports,
 * both keeping their data under `<data>/aws-local/`, then `npm start -- --store aws --create`
 * against them (its token and share keys in that folder too); stops them when it stops.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { defaultDataDir } from "@pisync/api";
import { type RunningServer, startDynamoDbLocal, startS3rver, stopProcessGroup } from "@pisync/testing/servers";

const BUCKET = "pisync";
const TABLE = "pisync";

/** `--data` is ours; every other flag goes to npm start as it is. */
function splitArgs(args: readonly string[]): { data?: string; passed: string[] } {
  const passed: string[] = [];
  let data: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--data") data = args[++i];
    else if (arg.startsWith("--data=")) data = arg.slice("--data=".length);
    else passed.push(arg);
  }
  return { data, passed };
}

const { data, passed } = splitArgs(process.argv.slice(2));
if (data === "") {
  console.error("npm run aws-local: --data takes a folder, e.g. --data ~/pisync-data");
  process.exit(2);
}
const folder = join(data ?? defaultDataDir(), "aws-local");

const servers: RunningServer[] = [];
const stopServers = () => Promise.all(servers.map((server) => server.stop()));
try {
  servers.push(await startDynamoDbLocal({ directory: join(folder, "dynamodb") }));
  servers.push(await startS3rver([BUCKET], { directory: join(folder, "s3") }));
} catch (error) {
  console.error(`npm run aws-local: could not start the local servers: ${(error as Error).message}`);
  await stopServers();
  process.exit(1);
}
const [dynamodb, s3] = servers as [RunningServer, RunningServer];
console.log(`DynamoDB Local on ${dynamodb.endpoint}, s3rver on ${s3.endpoint} (data in ${folder})`);

const child = spawn("npm", ["start", "--", "--store", "aws", "--create", "--data", folder, ...passed], {
  stdio: "inherit",
  detached: true,
  env: {
    ...process.env,
    AWS_REGION: "us-east-1",
    // s3rver's gate checks signatures with this key; DynamoDB Local takes any.
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    AWS_SESSION_TOKEN: "",
    AWS_PROFILE: "",
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamodb.endpoint,
    PISYNC_BUCKET: BUCKET,
    PISYNC_TABLE: TABLE,
    // The SDK's notice that its 2027 releases need Node 22 (ours are pinned) is noise here.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  },
});

let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  if (child.exitCode === null && child.signalCode === null) await stopProcessGroup(child.pid as number);
  await stopServers();
  process.exit(code);
};
child.on("exit", (code) => void stop(code ?? 1));
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));
