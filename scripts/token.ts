/**
 * `npm run token -- --user NAME [--name LABEL] [--data DIR]`: creates a token for a user of the
 * embedded store and prints it as the last line.
 * `npm run token -- --user NAME --table TABLE [--region REGION] [--endpoint URL]`: the same
 * against a deployed stack's DynamoDB table, with your AWS credentials (environment, profile,
 * SSO: the SDK's default chain).
 */
import { parseArgs } from "node:util";
import { defaultProvider } from "@aws-sdk/credential-provider-node";
import { defaultDataDir } from "@pisync/api";
import { BadRequest, Tokens } from "@pisync/core";
import type { MetaStore } from "@pisync/store";
import { DynamoMetaStore } from "@pisync/store/aws";
import { embeddedStores } from "@pisync/store/embedded";

const USAGE = `usage: npm run token -- --user NAME [--name LABEL] [--data DIR]
       npm run token -- --user NAME --table TABLE [--region REGION] [--endpoint URL]`;

function usage(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

let values: { user?: string; data?: string; name?: string; table?: string; region?: string; endpoint?: string };
try {
  ({ values } = parseArgs({
    options: {
      user: { type: "string" },
      data: { type: "string" },
      name: { type: "string" },
      table: { type: "string" },
      region: { type: "string" },
      endpoint: { type: "string" },
    },
  }));
} catch (error) {
  usage((error as Error).message);
}
const { user, table } = values;
if (!user) usage("--user is required");
if (table && values.data) usage("--data is for the embedded store, --table for a deployed one: not both");
if (!table && (values.region || values.endpoint)) usage("--region and --endpoint go with --table");

/** Where the token goes: the deployed table, or the embedded store. */
function open(): { meta: MetaStore; where: string; close: () => void } {
  if (table) {
    const region = values.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    if (!region) usage("--region (or AWS_REGION) is required with --table");
    const connection = {
      region,
      credentials: defaultProvider(),
      endpoints: values.endpoint ? { dynamodb: values.endpoint } : undefined,
    };
    return { meta: new DynamoMetaStore(connection, table), where: `table ${table} in ${region}`, close() {} };
  }
  const dataDir = values.data ?? defaultDataDir();
  const stores = embeddedStores(dataDir);
  return { meta: stores.meta, where: dataDir, close: () => stores.close() };
}

const store = open();
try {
  const { token, record } = await new Tokens(store.meta).create(user, values.name ?? "created by npm run token");
  console.log(`token ${record.id} for user "${record.userId}" (store: ${store.where}):`);
  console.log(token);
} catch (error) {
  if (error instanceof BadRequest) usage(error.message);
  // The store could not be reached or refused (credentials, table name): not a usage error.
  // The error's name is the service's error code (ResourceNotFoundException, AccessDeniedException...).
  const { name, message } = error as Error;
  console.error(`could not create the token in ${store.where}: ${name}: ${message}`);
  process.exitCode = 1;
} finally {
  store.close();
}
