/**
 * `npm run token -- --user NAME [--data DIR] [--name LABEL]`: creates a token for a user of
 * the embedded store and prints it as the last line.
 */
import { parseArgs } from "node:util";
import { defaultDataDir } from "@pisync/api";
import { Tokens } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";

function usage(message: string): never {
  console.error(`${message}\nusage: npm run token -- --user NAME [--data DIR] [--name LABEL]`);
  process.exit(2);
}

let values: { user?: string; data?: string; name?: string };
try {
  ({ values } = parseArgs({
    options: { user: { type: "string" }, data: { type: "string" }, name: { type: "string" } },
  }));
} catch (error) {
  usage((error as Error).message);
}
if (!values.user) usage("--user is required");
const dataDir = values.data ?? defaultDataDir();
const stores = embeddedStores(dataDir);
try {
  const { token, record } = await new Tokens(stores.meta).create(
    values.user,
    values.name ?? "created by npm run token",
  );
  console.log(`token ${record.id} for user "${record.userId}" (store: ${dataDir}):`);
  console.log(token);
} catch (error) {
  usage((error as Error).message);
} finally {
  stores.close();
}
