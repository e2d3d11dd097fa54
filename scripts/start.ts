/**
 * `npm start`: pisync on this machine, on the embedded store (or S3 + DynamoDB with
 * `--store aws`), and the watcher that backs up this machine's pi sessions into it.
 *   npm start -- [--port 8787] [--host 127.0.0.1] [--public-url https://…] [--store embedded|aws]
 *                [--data DIR] [--create] [--no-watch] [--root DIR]...
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { defaultDataDir, publicUrlOf, startNodeServer } from "@pisync/api";
import { Api, confirmedState, createLogger, defaultRoots, mergeEnabled, Watcher } from "@pisync/cli";
import * as z from "zod/mini";
import { chooseStore, fail, openChosen, STORE_OPTIONS, STORE_USAGE, type StoreChoice } from "./store-flags.js";

const USAGE = `usage: npm start -- [--port 8787] [--host 127.0.0.1] [--public-url https://…] ${STORE_USAGE} [--no-watch] [--root DIR]...`;

const Flags = z.object({
  port: z.pipe(
    z.string().check(z.regex(/^\d{1,5}$/, "--port takes a port number, e.g. --port 8787")),
    z.transform(Number),
  ),
  host: z.string().check(z.minLength(1, "--host takes an address, e.g. --host 127.0.0.1")),
  data: z.string().check(z.minLength(1, "--data takes a folder, e.g. --data ~/pisync-data")),
  root: z.optional(
    z.array(z.string().check(z.minLength(1, "--root takes a folder, e.g. --root ~/.pi/agent/sessions"))),
  ),
  "public-url": z.optional(
    z.string().check(z.minLength(1, "--public-url takes an address, e.g. https://pisync.example.com")),
  ),
});

function usage(message: string): never {
  console.error(`npm start: ${message}\n${USAGE}`);
  process.exit(2);
}

let values: Record<string, unknown>;
try {
  ({ values } = parseArgs({
    // Node 20's parseArgs has no negated flags: --no-watch is taken out first.
    args: process.argv.slice(2).filter((arg) => arg !== "--no-watch"),
    options: {
      port: { type: "string", default: "8787" },
      host: { type: "string", default: "127.0.0.1" },
      ...STORE_OPTIONS,
      root: { type: "string", multiple: true },
      "public-url": { type: "string" },
    },
  }));
} catch (error) {
  usage((error as Error).message);
}
const flags = Flags.safeParse({ ...values, data: values.data ?? defaultDataDir() });
if (!flags.success) usage(flags.error.issues.map((issue) => issue.message).join("; "));
const watch = !process.argv.includes("--no-watch");
// The address others reach this server at: share and sign-in links are made with it.
let publicUrl: string | undefined;
try {
  const given = flags.data["public-url"] ?? process.env.PISYNC_PUBLIC_URL;
  publicUrl = given ? publicUrlOf(given) : undefined;
} catch (error) {
  usage(`${flags.data["public-url"] ? "--public-url" : "PISYNC_PUBLIC_URL"}: ${(error as Error).message}`);
}
if (!watch && flags.data.root) usage("--root names what the watcher follows: it goes without --no-watch");

let choice: StoreChoice;
try {
  choice = chooseStore(values);
  // On aws: the credentials, bucket and table are checked (and made, with --create) before listening.
  if (choice.kind === "aws") (await openChosen(choice)).close();
} catch (error) {
  fail("npm start", error, USAGE);
}

let server: Awaited<ReturnType<typeof startNodeServer>>;
try {
  server = await startNodeServer({
    port: flags.data.port,
    host: flags.data.host,
    dataDir: flags.data.data,
    aws: choice.kind === "aws" ? choice.settings : undefined,
    publicUrl,
  });
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${flags.data.host}:${flags.data.port}`;
  if (code === "EADDRINUSE") {
    console.error(
      `npm start: ${where} is already in use (another npm start?): stop it, or pick another port: npm start -- --port ${flags.data.port + 1}`,
    );
  } else if (code === "EADDRNOTAVAIL" || code === "EACCES") {
    console.error(`npm start: cannot listen on ${where} (${code}): pick another --host or --port`);
  } else {
    console.error(`npm start: could not start: ${(error as Error).message}`);
  }
  process.exit(1);
}
let watcher: Watcher | undefined;
if (watch) {
  const roots = flags.data.root?.map((root) => resolve(root)) ?? defaultRoots();
  const api = new Api({ endpoint: server.url, token: server.token });
  // PISYNC_MERGE=off: a session continued on two machines becomes a new generation (the old rule).
  const merge = mergeEnabled();
  // What was confirmed with this server's data (its id), not merely this address.
  const { state } = await confirmedState(api);
  watcher = new Watcher({ api, state, log: createLogger(false), merge }, { roots });
  console.log(`backing up the pi sessions in ${roots.join(", ")}`);
  watcher.start();
}
const stop = async () => {
  watcher?.stop();
  await server.close();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
// Under `npm start` the parent is npm (the script `exec`s node, so no shell sits between): killed
// by its pid, even with SIGKILL, npm cannot pass anything on, and the server would keep the port.
// It stops once npm is gone (this process is then another's child).
if (process.env.npm_lifecycle_event === "start") {
  const parent = process.ppid;
  const orphaned = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(orphaned);
    void stop();
  }, 500);
  orphaned.unref();
}
