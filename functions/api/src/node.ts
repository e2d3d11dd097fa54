/**
 * pisync on one machine: the same app on the embedded store (files + SQLite), served by Node.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import {
  newShareKeys,
  parseShareKeys,
  type ReaderCacheLimits,
  SearchIndexer,
  type ShareKeys,
  storedLines,
  Tokens,
} from "@pisync/core";
import { ThreadedSearchIndex } from "@pisync/search/embedded-threaded";
import { embeddedStores } from "@pisync/store/embedded";
import { createApp } from "./app.js";
import { DEFAULT_RATE_LIMITS, type RateLimits } from "./rate-limit.js";
import { type WorkerPoolOptions, workerPool } from "./worker-pool.js";

export interface NodeServerOptions {
  port: number;
  host: string;
  dataDir: string;
  log?: (line: string) => void;
  /** Requests per client address and per share link (default {@link DEFAULT_RATE_LIMITS}). */
  rateLimits?: RateLimits;
  /** The worker pool that renders and masks shares. */
  workers?: WorkerPoolOptions;
}

/**
 * What the one-machine server's reader keeps: a million-line session's index (about 400 MB)
 * fits, so a large link is indexed once per version, not once per request.
 */
export const NODE_READER_CACHE: Partial<ReaderCacheLimits> = { indexGenerations: 8, indexRecords: 1_200_000 };

/** The user the one-machine server creates on first start. */
export const LOCAL_USER = "local";

/** The token file of the local user, readable by its owner only. */
export function localTokenPath(dataDir: string): string {
  return join(dataDir, "local-token");
}

/** Creates the local user's token on first start; returns it (and whether it is new). */
export async function ensureLocalToken(dataDir: string, tokens: Tokens): Promise<{ token: string; created: boolean }> {
  const path = localTokenPath(dataDir);
  if (existsSync(path)) {
    const token = readFileSync(path, "utf8").trim();
    try {
      await tokens.authenticate(token);
      return { token, created: false };
    } catch {
      // The file outlived its token (revoked): make a new one.
    }
  }
  const { token } = await tokens.create(LOCAL_USER, "created by npm start");
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { token, created: true };
}

/** The share-signing keys of this data folder, created on first start (readable by its owner only). */
export function localShareKeys(dataDir: string): ShareKeys {
  const path = join(dataDir, "share-keys.json");
  if (existsSync(path)) return parseShareKeys(readFileSync(path, "utf8"));
  const keys = newShareKeys();
  writeFileSync(path, `${JSON.stringify(keys)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return keys;
}

/** How often the search index catches up with the stored bytes (an append is searchable within 10 s). */
export const SEARCH_CATCH_UP_MS = 5000;

/** Runs the search catch-up pass now and every `ms` (one pass at a time); returns its stop. */
function catchUpEvery(indexer: SearchIndexer, ms: number, log: (line: string) => void): () => void {
  let running = false;
  const pass = () => {
    if (running) return;
    running = true;
    indexer
      .catchUp()
      .catch((error: Error) => log(`pisync: search catch-up failed: ${error.message}`))
      .finally(() => {
        running = false;
      });
  };
  pass();
  const timer = setInterval(pass, ms);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * `npm start`: the app on the embedded store of `options.dataDir`, listening on
 * `options.host:options.port`, with the local user's token created on first start (printed
 * once through `log`). Rejects when the port is busy (`EADDRINUSE`) or the host is not this
 * machine's; the store is closed again then.
 *
 * @example
 * ```ts
 * const server = await startNodeServer({ dataDir, host: "127.0.0.1", port: 0 });
 * console.log(server.url, server.token);
 * ```
 */
export async function startNodeServer(options: NodeServerOptions) {
  const log = options.log ?? ((line: string) => console.log(line));
  const stores = embeddedStores(options.dataDir);
  const keys = localShareKeys(options.dataDir);
  const work = workerPool(options.workers);
  // Indexing runs on the index's writer thread: appends never wait behind it.
  const search = new ThreadedSearchIndex(join(options.dataDir, "search.sqlite"), storedLines(stores));
  // Searches run on threads of their own (no query holds up this loop): started now, not by the first search.
  void search.warm();
  const indexer = new SearchIndexer(stores, search, { users: () => stores.meta.users(), log });
  const stopCatchUp = catchUpEvery(indexer, SEARCH_CATCH_UP_MS, log);
  const app = createApp({
    search: { index: search, indexer },
    stores,
    shareKeys: async () => keys,
    work,
    readerCache: NODE_READER_CACHE,
    rateLimits: {
      limits: options.rateLimits ?? DEFAULT_RATE_LIMITS,
      clientIp: (c) => getConnInfo(c).remote.address ?? "unknown",
    },
  });
  const { token, created } = await ensureLocalToken(options.dataDir, new Tokens(stores.meta));
  let server: ReturnType<typeof serve>;
  try {
    server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, () => resolve(s));
      // A busy port (EADDRINUSE) or a host that is not this machine's: the caller says so.
      s.once("error", reject);
    });
  } catch (error) {
    stopCatchUp();
    await indexer.flush();
    await search.close();
    stores.close();
    throw error;
  }
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const url = `http://${options.host}:${port}`;
  log(`pisync listening on ${url} (embedded store in ${options.dataDir})`);
  // The token is printed once, when it is made: later starts say where it is (logs keep no copy).
  if (created) {
    log(`first start: created user "${LOCAL_USER}"; its token (also in ${localTokenPath(options.dataDir)}):`);
    log(token);
  } else log(`the token of user "${LOCAL_USER}" is in ${localTokenPath(options.dataDir)}`);
  return {
    url,
    token,
    /** Tasks the worker pool finished (pages rendered, batches masked). */
    get workerTasks() {
      return work.completed;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await work.close();
      stopCatchUp();
      await indexer.flush(); // what was written is indexed before the index closes
      await search.close();
      stores.close();
    },
  };
}
