/**
 * The one module that reads the environment. Everything else receives its settings.
 */
import { homedir } from "node:os";
import { join } from "node:path";

/** Where the one-machine server keeps its data by default: `$XDG_DATA_HOME/pisync` (~/.local/share/pisync). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PISYNC_DATA) return env.PISYNC_DATA;
  const base = env.XDG_DATA_HOME || join(homedir(), ".local", "share");
  return join(base, "pisync");
}

/** Settings of the Lambda function, from its environment (set by the CDK stack). */
export function lambdaConfig(env: NodeJS.ProcessEnv = process.env) {
  const bucket = env.PISYNC_BUCKET;
  const table = env.PISYNC_TABLE;
  if (!bucket || !table) throw new Error("PISYNC_BUCKET and PISYNC_TABLE must be set");
  const maxShareDays = Number(env.PISYNC_MAX_SHARE_DAYS ?? 90);
  return { bucket, table, shareKeySecret: env.PISYNC_SHARE_KEY_SECRET, maxShareDays };
}
