/**
 * `npm run reindex -- [--user NAME] [--data DIR]`: rebuilds the embedded search index from the
 * stored bytes — one user's sessions, or every user's the index knows and the local user's.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { defaultDataDir, LOCAL_USER } from "@pisync/api";
import { SearchIndexer, storedLines } from "@pisync/core";
import { ThreadedSearchIndex } from "@pisync/search/embedded-threaded";
import { embeddedStores } from "@pisync/store/embedded";

const USAGE = "usage: npm run reindex -- [--user NAME] [--data DIR]";

let values: { user?: string; data?: string };
try {
  ({ values } = parseArgs({ options: { user: { type: "string" }, data: { type: "string" } } }));
} catch (error) {
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
const dataDir = values.data ?? defaultDataDir();
const stores = embeddedStores(dataDir);
const index = new ThreadedSearchIndex(join(dataDir, "search.sqlite"), storedLines(stores));
try {
  // Every user of the store (and any the index still holds, whose documents then go).
  const users = values.user
    ? [values.user]
    : [...new Set([LOCAL_USER, ...(await stores.meta.users()), ...(await index.users())])];
  const started = performance.now();
  await new SearchIndexer(stores, index).rebuild(users);
  await index.optimize();
  let sessions = 0;
  for (const user of users) sessions += (await index.sessions(user)).length;
  console.log(
    `reindexed ${sessions} sessions of ${users.length} user(s) in ${Math.round(performance.now() - started)} ms`,
  );
} finally {
  await index.close();
  stores.close();
}
