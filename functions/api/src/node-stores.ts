/**
 * The store pairs the one-machine server runs on: the embedded store of its data folder, or
 * S3 + DynamoDB (`--store aws`) through the AWS SDK's standard settings. Each comes with its
 * search index and what the sweep needs; the server itself is the same on both.
 */
import { join } from "node:path";
import { defaultProvider } from "@aws-sdk/credential-provider-node";
import { storedLines, type TemporaryFiles } from "@pisync/core";
import type { SearchIndex } from "@pisync/search";
import { ThreadedS3SearchIndex } from "@pisync/search/aws/threaded";
import {
  DEFAULT_SEARCH_THREADS,
  type SearchThreadsOptions,
  ThreadedSearchIndex,
} from "@pisync/search/embedded-threaded";
import type { Stores } from "@pisync/store";
import { type AwsStoresConfig, awsStores, ensureBucket, ensureTable } from "@pisync/store/aws";
import { embeddedStores, FileBlobStore } from "@pisync/store/embedded";

/** A setting of `--store aws` is missing or wrong: the message says which, in one line. */
export class StoreSettingsError extends Error {
  override readonly name = "StoreSettingsError";
}

/** What `--store aws` connects to. */
export interface AwsStoreSettings extends AwsStoresConfig {
  /** The Secrets Manager secret holding the share-signing keys; the data folder keeps them when absent. */
  shareKeySecret?: string;
}

/**
 * `--store aws` settings from the environment, as the AWS SDKs read them: `AWS_REGION` (or
 * `AWS_DEFAULT_REGION`), credentials from the SDK's default chain (environment, profile, SSO,
 * container or instance role), `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL_DYNAMODB` (or
 * `AWS_ENDPOINT_URL` for both) for compatible servers, addressed path-style; and pisync's own
 * `PISYNC_BUCKET`, `PISYNC_TABLE`, `PISYNC_SHARE_KEY_SECRET`. `overrides` (flags) win.
 * @throws StoreSettingsError naming every missing setting
 */
export function awsStoreSettings(
  env: NodeJS.ProcessEnv = process.env,
  overrides: { table?: string; region?: string; dynamodbEndpoint?: string } = {},
  needs: { bucket: boolean } = { bucket: true },
): AwsStoreSettings {
  const region = overrides.region || env.AWS_REGION || env.AWS_DEFAULT_REGION;
  // A command that writes to the table only (the token's) runs without a bucket: "" names none.
  const bucket = env.PISYNC_BUCKET || (needs.bucket ? undefined : "");
  const table = overrides.table || env.PISYNC_TABLE;
  const missing = [
    region ? undefined : "AWS_REGION",
    bucket !== undefined ? undefined : "PISYNC_BUCKET",
    table ? undefined : "PISYNC_TABLE",
  ].filter((name) => name !== undefined);
  if (!region || bucket === undefined || !table) {
    throw new StoreSettingsError(`--store aws needs ${missing.join(", ")} set`);
  }
  const s3 = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  const dynamodb = overrides.dynamodbEndpoint || env.AWS_ENDPOINT_URL_DYNAMODB || env.AWS_ENDPOINT_URL || undefined;
  const secretsmanager = env.AWS_ENDPOINT_URL_SECRETS_MANAGER || env.AWS_ENDPOINT_URL || undefined;
  for (const [name, url] of Object.entries({ s3, dynamodb, secretsmanager })) {
    if (url && !URL.canParse(url)) throw new StoreSettingsError(`the ${name} endpoint is not a URL: ${url}`);
  }
  return {
    region,
    bucket,
    table,
    credentials: defaultProvider(),
    endpoints: { s3, dynamodb, secretsmanager },
    s3PathStyle: Boolean(s3),
    shareKeySecret: env.PISYNC_SHARE_KEY_SECRET || undefined,
  };
}

/** Where a store pair is, for a person: "embedded store in DIR", "S3 bucket B and DynamoDB table T (region)". */
export function describeAws(settings: AwsStoreSettings): string {
  const where = [settings.endpoints?.s3, settings.endpoints?.dynamodb].filter(Boolean);
  const bucket = settings.bucket ? `S3 bucket ${settings.bucket} and ` : "";
  return `${bucket}DynamoDB table ${settings.table} in ${settings.region}${
    where.length ? ` at ${[...new Set(where)].join(", ")}` : ""
  }`;
}

/**
 * Checks that the credentials resolve and the bucket and table answer (creating them when
 * `create`), so that a wrong setting stops the start with one line, not the first request.
 * @throws StoreSettingsError saying what failed
 */
export async function checkAwsStores(settings: AwsStoreSettings, create: boolean): Promise<void> {
  try {
    if (typeof settings.credentials === "function") await settings.credentials();
  } catch (error) {
    throw new StoreSettingsError(
      `no AWS credentials found (environment, profile, SSO or role): ${(error as Error).message.split("\n")[0]}`,
    );
  }
  const step = async (what: string, run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (error) {
      const { name, message } = error as Error;
      const hint = create ? "" : " (--create makes a missing bucket or table)";
      throw new StoreSettingsError(`${what}: ${name}: ${message.split("\n")[0]}${hint}`);
    }
  };
  const bucket = settings.bucket !== "";
  if (create) {
    if (bucket) await step(`could not create bucket ${settings.bucket}`, () => ensureBucket(settings, settings.bucket));
    await step(`could not create table ${settings.table}`, () => ensureTable(settings, settings.table));
  }
  const stores = awsStores(settings);
  if (bucket) await step(`cannot use bucket ${settings.bucket}`, () => stores.blobs.list("sessions/!"));
  await step(`cannot use table ${settings.table}`, () => stores.meta.getHead("!", "!"));
}

/** A store pair opened for the server, the token and verify commands. */
export interface OpenStores {
  stores: Stores;
  /** Where it is, for a person. */
  where: string;
  /** The embedded store's temporary files (the sweep removes stale ones). */
  temporary?: TemporaryFiles;
  close(): void;
}

/** Opens the embedded store of a data folder. */
export function openEmbedded(dataDir: string): OpenStores {
  const stores = embeddedStores(dataDir);
  return {
    stores,
    where: `embedded store in ${dataDir}`,
    temporary: new FileBlobStore(join(dataDir, "blobs")),
    close: () => stores.close(),
  };
}

/** Opens S3 + DynamoDB. */
export function openAws(settings: AwsStoreSettings): OpenStores {
  return { stores: awsStores(settings), where: describeAws(settings), close() {} };
}

/**
 * The search index of a store pair: a SQLite file in the data folder, or one object per user in
 * S3. On both, searches run on threads of their own (no query holds up the server's loop) with
 * a time limit (`searchThreads`); writes stay on the caller's side (embedded: its writer thread).
 */
export function searchIndexFor(
  open: OpenStores,
  dataDir: string,
  aws?: AwsStoreSettings,
  searchThreads: SearchThreadsOptions = DEFAULT_SEARCH_THREADS,
): SearchIndex & { close(): void | Promise<void> } {
  const lines = storedLines(open.stores);
  const index = aws
    ? new ThreadedS3SearchIndex(
        { connection: aws, table: aws.table, blobs: open.stores.blobs, lines, cacheDir: join(dataDir, "search-cache") },
        searchThreads,
      )
    : new ThreadedSearchIndex(join(dataDir, "search.sqlite"), lines, searchThreads);
  // Started now, not by the first search (which would pay their start-up within its time limit).
  void index.warm();
  return index;
}
