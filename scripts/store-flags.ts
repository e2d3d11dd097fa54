/**
 * The store flags `npm start`, `npm run token` and `npm run verify` share:
 *   --store embedded|aws   the embedded store of the data folder (default), or S3 + DynamoDB
 *   --data DIR             the data folder (the embedded store; on aws, the token and share keys)
 *   --create               (aws) create the bucket and table when missing
 * `--store aws` reads the AWS SDK's standard settings and PISYNC_BUCKET / PISYNC_TABLE from the
 * environment (see docs/self-hosting.md).
 */
import {
  type AwsStoreSettings,
  awsStoreSettings,
  checkAwsStores,
  defaultDataDir,
  type OpenStores,
  openAws,
  openEmbedded,
  StoreSettingsError,
} from "@pisync/api";

/** The flags' `parseArgs` options, to spread into a command's own. */
export const STORE_OPTIONS = {
  store: { type: "string" },
  data: { type: "string" },
  create: { type: "boolean" },
} as const;

/** The flags' usage, for a command's usage line. */
export const STORE_USAGE = "[--store embedded|aws] [--data DIR] [--create]";

/** The store a command runs on. */
export type StoreChoice =
  | { kind: "embedded"; dataDir: string }
  | { kind: "aws"; dataDir: string; settings: AwsStoreSettings; create: boolean };

/**
 * The store the flags choose. `overrides` are a command's own aws flags (the token command's
 * `--table`, `--region`, `--endpoint`).
 * @throws StoreSettingsError with a one-line message (a usage error)
 */
export function chooseStore(
  values: { store?: string; data?: string; create?: boolean },
  options: { overrides?: Parameters<typeof awsStoreSettings>[1]; needsBucket?: boolean } = {},
): StoreChoice {
  const kind = values.store ?? "embedded";
  const dataDir = values.data ?? defaultDataDir();
  if (kind === "embedded") {
    if (values.create) throw new StoreSettingsError("--create goes with --store aws");
    return { kind, dataDir };
  }
  if (kind !== "aws") throw new StoreSettingsError(`--store takes embedded or aws, not ${kind}`);
  const settings = awsStoreSettings(process.env, options.overrides, { bucket: options.needsBucket ?? true });
  return { kind, dataDir, settings, create: values.create ?? false };
}

/**
 * Opens the chosen store; on aws, checks the credentials, bucket and table first (creating the
 * last two with `--create`). @throws StoreSettingsError with a one-line message
 */
export async function openChosen(choice: StoreChoice): Promise<OpenStores> {
  if (choice.kind === "embedded") return openEmbedded(choice.dataDir);
  await checkAwsStores(choice.settings, choice.create);
  return openAws(choice.settings);
}

/** Prints a one-line error (no stack trace) and exits: 2 for settings and usage, 1 for what failed at run time. */
export function fail(command: string, error: unknown, usage?: string): never {
  if (error instanceof StoreSettingsError) {
    console.error(`${command}: ${error.message}${usage ? `\n${usage}` : ""}`);
    process.exit(2);
  }
  const { name, message } = error as Error;
  console.error(`${command}: ${name}: ${String(message).split("\n")[0]}`);
  process.exit(1);
}

export { StoreSettingsError };
