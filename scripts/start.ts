/**
 * `npm start`: pisync on this machine, on the embedded store, and the watcher that backs up
 * this machine's pi sessions into it.
 *   npm start -- [--port 8787] [--host 127.0.0.1] [--data DIR] [--no-watch] [--root DIR]...
 */
import { parseArgs } from "node:util";
import { defaultDataDir, startNodeServer } from "@pisync/api";
import { Api, createLogger, defaultRoots, StateStore, Watcher } from "@pisync/cli";
import * as z from "zod/mini";

const Flags = z.object({
  port: z.pipe(z.string().check(z.regex(/^\d{1,5}$/, "--port takes a number")), z.transform(Number)),
  host: z.string().check(z.minLength(1)),
  data: z.string().check(z.minLength(1)),
});

function usage(message: string): never {
  console.error(
    `${message}\nusage: npm start -- [--port 8787] [--host 127.0.0.1] [--data DIR] [--no-watch] [--root DIR]...`,
  );
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
      data: { type: "string" },
    },
  }));
} catch (error) {
  usage((error as Error).message);
}
const flags = Flags.safeParse({ ...values, data: values.data ?? defaultDataDir() });
if (!flags.success) usage(z.prettifyError(flags.error));

const server = await startNodeServer({ port: flags.data.port, host: flags.data.host, dataDir: flags.data.data });
let watcher: Watcher | undefined;
if (!process.argv.includes("--no-watch")) {
  const roots = (values.root as string[] | undefined) ?? defaultRoots();
  const api = new Api({ endpoint: server.url, token: server.token });
  watcher = new Watcher({ api, state: new StateStore(server.url), log: createLogger(false) }, { roots });
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
