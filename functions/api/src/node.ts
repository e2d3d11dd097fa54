/**
 * pisync on one machine: the same app on the embedded store (files + SQLite), or on S3 +
 * DynamoDB (`--store aws`), served by Node.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import {
  newShareKeys,
  parseShareKeys,
  type ReaderCacheLimits,
  SearchIndexer,
  type ShareKeys,
  SWEEP_MIN_AGE_MS,
  TeamSearch,
  Tokens,
  teamLines,
  teamTenants,
  tenantIndexer,
  tenantStores,
  Uploads,
  verifyStores,
} from "@pisync/core";
import type { SearchIndex } from "@pisync/search";
import { SearchMarks } from "@pisync/search/aws/marks";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { DEFAULT_SEARCH_THREADS, type SearchThreadsOptions } from "@pisync/search/embedded-threaded";
import type { Stores } from "@pisync/store";
import { createApp } from "./app.js";
import { every } from "./every.js";
import { INDEX_BUDGET_MS, MarkingIndexer, passesUntilDone } from "./marking-indexer.js";
import { type AwsStoreSettings, type OpenStores, openAws, openEmbedded, searchIndexFor } from "./node-stores.js";
import { DEFAULT_RATE_LIMITS, type RateLimits } from "./rate-limit.js";
import { secretKeys } from "./share-key-secret.js";
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
  /** S3 + DynamoDB instead of the embedded store (`--store aws`); the data folder keeps the token and share keys. */
  aws?: AwsStoreSettings;
  /** How often the sweep runs (default {@link SWEEP_EVERY_MS}). */
  sweepEveryMs?: number;
  /** How searches run on their threads: threads, time limit, queue (default {@link DEFAULT_SEARCH_THREADS}). */
  searchThreads?: SearchThreadsOptions;
  /**
   * The address others reach this server at (`https://pisync.example.com`, an origin): what
   * share links, sign-in links, device sign-in pages and previews are made with. Default: the
   * address each request came to.
   */
  publicUrl?: string;
}

/** Hosts only this machine can reach. */
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/i;

/**
 * What the server says once at start about the links it makes: on a loopback address without a
 * public URL they open only on this machine. Undefined when there is nothing to say.
 */
export function linkAddressNote(host: string, publicUrl: string | undefined): string | undefined {
  if (publicUrl) return `links made here (shares, sign-in, previews) use ${publicUrl}`;
  if (!LOOPBACK.test(host)) return undefined;
  return (
    `note: links made here (share links, sign-in links) start with http://${host.includes(":") ? `[${host}]` : host}:… and open only on this machine; ` +
    "to share with others, run behind an address they reach and pass it: npm start -- --public-url https://… (or PISYNC_PUBLIC_URL); see docs/sharing.md"
  );
}

/**
 * A public URL as given (`--public-url`, `PISYNC_PUBLIC_URL`): an http(s) origin, with no path,
 * query or credentials; returned as its origin. @throws Error saying what is wrong
 */
export function publicUrlOf(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new Error(`the public URL ${JSON.stringify(given)} is not a URL: e.g. https://pisync.example.com`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error(`the public URL must start with https:// (or http://), not ${url.protocol}`);
  }
  if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash || url.username || url.password) {
    throw new Error(`the public URL is an origin only (scheme, host, port), e.g. ${url.origin}`);
  }
  return url.origin;
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

/**
 * How often the search catch-up pass runs on S3 + DynamoDB: there it lists every user (a Scan of
 * the table), and writes are indexed by the drain in any case; the pass repairs what a crash left.
 */
export const AWS_SEARCH_CATCH_UP_MS = 3600_000;

/** After a catch-up pass that failed (the storage did not answer), the next one runs this soon. */
export const SEARCH_CATCH_UP_RETRY_MS = 60_000;

/**
 * How often the server on S3 + DynamoDB looks for due search marks (a rebuild's, or left by the
 * Lambda function's writes to the same stores); when it finds some, passes run back to back.
 */
export const AWS_SEARCH_MARKS_EVERY_MS = 60_000;

/** How often the sweep removes unreferenced objects and rolls heads behind their bytes forward. */
export const SWEEP_EVERY_MS = 3600_000;

/**
 * The search marks' passes on S3 + DynamoDB: now and every {@link AWS_SEARCH_MARKS_EVERY_MS},
 * bounded passes back to back while marks are due. Returns its stop (which waits for the pass under way).
 */
function markedPasses(
  stores: Stores,
  search: SearchIndex,
  aws: AwsStoreSettings,
  log: (line: string) => void,
): () => Promise<void> {
  const marks = new SearchMarks(aws, aws.table);
  const indexer = new MarkingIndexer(stores, search, marks, log);
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const stop = every(AWS_SEARCH_MARKS_EVERY_MS, true, () => {
    running = passesUntilDone(indexer, INDEX_BUDGET_MS, () => stopped).catch((error: Error) =>
      log(`pisync: search passes failed: ${error.message}`),
    );
    return running.then(() => undefined);
  });
  return async () => {
    stopped = true;
    stop();
    await running;
    marks.close();
  };
}

/** The sweep of the server's schedule: what `npm run verify -- --repair` does, without reading every byte. */
async function sweep(open: OpenStores, log: (line: string) => void): Promise<void> {
  try {
    const report = await verifyStores(open.stores, {
      repair: true,
      minAgeMs: SWEEP_MIN_AGE_MS,
      temporary: open.temporary,
      onFinding: (finding) =>
        log(
          `pisync: sweep: ${finding.kind} ${finding.key ?? `${finding.userId}/${finding.sessionId}`}: ${finding.message}${finding.repaired ? " (repaired)" : ""}`,
        ),
    });
    if (report.wrong > 0) log(`pisync: sweep: ${report.wrong} problems left: run npm run verify`);
  } catch (error) {
    log(`pisync: sweep failed: ${(error as Error).message}`);
  }
}

/** How long an idle client connection is kept open. */
const KEEP_ALIVE_MS = 65_000;

/** How often uploads no append claimed are looked for (they go a day after their ticket). */
export const UPLOAD_SWEEP_MS = 3600 * 1000;

/** Removes unclaimed uploads now and every `ms`; returns its stop. */
function sweepUploadsEvery(uploads: Uploads, ms: number, log: (line: string) => void): () => void {
  const pass = () => {
    uploads.sweep().catch((error: Error) => log(`pisync: the sweep of old uploads failed: ${error.message}`));
  };
  pass();
  const timer = setInterval(pass, ms);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * How often teams' search catches up with their sessions: a pass reads the head of every team
 * session, and writes, moves and removals mark the team's index as they happen, so the pass only
 * makes good what a crash lost.
 */
const TEAM_SEARCH_CATCH_UP_MS = 600_000;

/**
 * Teams' search on this machine. Embedded: one SQLite file (`search-teams.sqlite` in the data
 * folder) whose tenants are teams, caught up at start and every {@link TEAM_SEARCH_CATCH_UP_MS}.
 * On AWS (`shared`, the users' index and its indexer over `tenantStores`): each team a tenant of
 * that index, as on Lambda, caught up with the users' tenants. Absent when the stores keep no teams.
 */
function teamSearchFor(
  stores: Stores,
  dataDir: string,
  log: (line: string) => void,
  shared?: { index: SearchIndex; indexer: SearchIndexer },
) {
  if (!stores.teams) return undefined;
  if (shared) {
    const search = new TeamSearch(stores, stores.teams, teamTenants(shared.index), {
      indexer: tenantIndexer(shared.indexer),
      log,
    });
    // The users' indexer and index close with the server.
    return { search, close: async () => {} };
  }
  const index = new SqliteSearchIndex(join(dataDir, "search-teams.sqlite"), teamLines(stores, stores.teams));
  const search = new TeamSearch(stores, stores.teams, index, { log });
  const stop = every(TEAM_SEARCH_CATCH_UP_MS, true, () =>
    search.catchUp().catch((error: Error) => log(`pisync: team search catch-up failed: ${error.message}`)),
  );
  return {
    search,
    async close() {
      stop();
      await search.indexer.flush();
      index.close();
    },
  };
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
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const open = options.aws ? openAws(options.aws) : openEmbedded(options.dataDir);
  const { stores } = open;
  const secret = options.aws?.shareKeySecret;
  const keys = options.aws && secret ? secretKeys(options.aws, secret) : undefined;
  const localKeys = keys ? undefined : localShareKeys(options.dataDir);
  const work = workerPool(options.workers);
  // Embedded: indexing runs on the index's writer thread, so appends never wait behind it.
  // On AWS, teams are tenants of the users' index (as on Lambda): its indexer reads their sessions as theirs.
  const indexStores = options.aws && stores.teams ? tenantStores(stores, stores.teams) : stores;
  const search = searchIndexFor(
    { ...open, stores: indexStores },
    options.dataDir,
    options.aws,
    options.searchThreads ?? DEFAULT_SEARCH_THREADS,
  );
  const indexer = new SearchIndexer(indexStores, search, { users: () => stores.meta.users(), log });
  // A pass that failed (at start, the storage not answering yet) runs again within a minute, not an hour.
  const stopCatchUp = every(
    options.aws ? AWS_SEARCH_CATCH_UP_MS : SEARCH_CATCH_UP_MS,
    true,
    () =>
      indexer.catchUp().then(
        () => true,
        (error: Error) => {
          log(`pisync: search catch-up failed: ${error.message}`);
          return false;
        },
      ),
    SEARCH_CATCH_UP_RETRY_MS,
  );
  const stopMarks = options.aws ? markedPasses(indexStores, search, options.aws, log) : async () => {};
  const teams = teamSearchFor(stores, options.dataDir, log, options.aws ? { index: search, indexer } : undefined);
  const stopSweep = every(options.sweepEveryMs ?? SWEEP_EVERY_MS, false, () => sweep(open, log));
  const stopUploadSweep = sweepUploadsEvery(new Uploads(stores.blobs, 0), UPLOAD_SWEEP_MS, log);
  const app = createApp({
    search: { index: search, indexer, teams: teams?.search },
    stores,
    shareKeys: keys ?? (async () => localKeys as ShareKeys),
    work,
    readerCache: NODE_READER_CACHE,
    rateLimits: {
      limits: options.rateLimits ?? DEFAULT_RATE_LIMITS,
      clientIp: (c) => getConnInfo(c).remote.address ?? "unknown",
    },
    publicUrl: options.publicUrl,
  });
  const { token, created } = await ensureLocalToken(options.dataDir, new Tokens(stores.meta));
  let server: ReturnType<typeof serve>;
  try {
    server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, () => resolve(s));
      // Idle connections are kept well past any client's own keep-alive (Node's 5 s default races
      // a client reusing a connection just as it closes: "other side closed" on a busy machine).
      Object.assign(s, { keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: KEEP_ALIVE_MS + 1000 });
      // A busy port (EADDRINUSE) or a host that is not this machine's: the caller says so.
      s.once("error", reject);
    });
  } catch (error) {
    stopCatchUp();
    await stopMarks();
    stopSweep();
    stopUploadSweep();
    await indexer.flush();
    await search.close();
    await teams?.close();
    open.close();
    throw error;
  }
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const url = `http://${options.host}:${port}`;
  log(`pisync listening on ${url} (${open.where})`);
  const note = linkAddressNote(options.host, options.publicUrl);
  if (note) log(note);
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
      await stopMarks();
      stopSweep();
      stopUploadSweep();
      await indexer.flush(); // what was written is indexed before the index closes
      await search.close();
      await teams?.close();
      open.close();
    },
  };
}
