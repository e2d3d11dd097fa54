/**
 * `npm run token -- --user NAME [--name LABEL] [--store embedded|aws] [--data DIR] [--create]`:
 * creates a token for a user and prints it as the last line; on the embedded store of the data
 * folder, or (`--store aws`) in the DynamoDB table `npm start -- --store aws` uses, with the
 * same settings (AWS_REGION, PISYNC_TABLE, the SDK's credential chain...).
 * `--table TABLE [--region REGION] [--endpoint URL]` name a deployed stack's table instead.
 */
import { parseArgs } from "node:util";
import { openAws } from "@pisync/api";
import { BadRequest, Tokens } from "@pisync/core";
import { chooseStore, fail, openChosen, STORE_OPTIONS, STORE_USAGE, StoreSettingsError } from "./store-flags.js";

const USAGE = `usage: npm run token -- --user NAME [--name LABEL] ${STORE_USAGE}
       npm run token -- --user NAME --table TABLE [--region REGION] [--endpoint URL]`;

function usage(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

let values: {
  user?: string;
  name?: string;
  store?: string;
  data?: string;
  create?: boolean;
  table?: string;
  region?: string;
  endpoint?: string;
};
try {
  ({ values } = parseArgs({
    options: {
      user: { type: "string" },
      name: { type: "string" },
      ...STORE_OPTIONS,
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
if (table && values.store === "embedded") usage("--table names a DynamoDB table: it goes with --store aws");
if (!table && (values.region || values.endpoint) && values.store !== "aws") {
  usage("--region and --endpoint go with --table or --store aws");
}

const choice = (() => {
  try {
    return chooseStore(
      { ...values, store: table ? "aws" : values.store },
      { overrides: { table, region: values.region, dynamodbEndpoint: values.endpoint }, needsBucket: false },
    );
  } catch (error) {
    if (error instanceof StoreSettingsError) usage(`npm run token: ${error.message}`);
    throw error;
  }
})();
// The table is not checked first (unless --create): a failure to write the token says what is wrong.
const store =
  choice.kind === "aws" && !choice.create
    ? openAws(choice.settings)
    : await openChosen(choice).catch((e) => fail("npm run token", e));
try {
  const { token, record } = await new Tokens(store.stores.meta).create(user, values.name ?? "created by npm run token");
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
