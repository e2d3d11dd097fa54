/**
 * The AWS search index with its searches on threads of their own ({@link SearchThreads}): a
 * costly query never holds up the server's event loop, and each has a time limit. Writes
 * (indexing, the writer's copies, compaction) and the indexer's state reads stay on the
 * owning thread, as in {@link S3SearchIndex}. A reader thread reads the pointer at every search
 * (a consistent read), so it sees every change published before the search began.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { SearchPage } from "../port.js";
import type { SearchQuery } from "../query.js";
import { DEFAULT_SEARCH_THREADS, SearchThreads, type SearchThreadsOptions, threadFile } from "../search-threads.js";
import type { S3ReaderData } from "./s3-reader.js";
import { S3SearchIndex, type S3SearchIndexConfig } from "./s3-search-index.js";

/** The AWS search index, searched on threads (see the module's comment). */
export class ThreadedS3SearchIndex extends S3SearchIndex {
  private readonly searches: SearchThreads;
  private readonly folder: string;

  /**
   * `config` as {@link S3SearchIndex}'s, with `cacheDir` required: the writer's copies go in
   * its `writer` folder, each reader thread's in a `reader-N` folder of its own.
   */
  constructor(
    config: S3SearchIndexConfig & { cacheDir: string },
    searchThreads: SearchThreadsOptions = DEFAULT_SEARCH_THREADS,
  ) {
    super({ ...config, cacheDir: join(config.cacheDir, "writer") });
    this.folder = config.cacheDir;
    const { credentials, region, endpoints, s3PathStyle, maxAttempts, timeouts } = config.connection;
    const workerData: S3ReaderData = {
      // A credential source stays here (it caches, refreshes): the threads ask for what it gives.
      connection: {
        region,
        endpoints,
        s3PathStyle,
        maxAttempts,
        timeouts,
        credentials: typeof credentials === "function" ? undefined : credentials,
      },
      table: config.table,
      cacheDir: config.cacheDir,
      cacheBytes: config.cacheBytes,
      chunkBytes: config.chunkBytes,
      eagerBytes: config.eagerBytes,
      thread: -1, // set per thread
    };
    this.searches = new SearchThreads(
      { ...threadFile("s3-reader", import.meta.url), workerData: { ...workerData } },
      config.lines,
      searchThreads,
      {
        blob: (key: string, range?: { start: number; end: number }) => config.blobs.get(key, range),
        credentials: async () => (typeof credentials === "function" ? credentials() : credentials),
      },
    );
  }

  /** Runs on a search thread. @throws SearchTimeout past the time limit (see {@link SearchThreads}) */
  override search(
    userId: string,
    query: SearchQuery,
    options: { limit: number; cursor?: string },
  ): Promise<SearchPage> {
    return this.searches.search(userId, query, options);
  }

  /** Starts the search threads now and resolves once they are ready (else the first searches start them). */
  warm(): Promise<void> {
    return this.searches.warm();
  }

  /** Stops the search threads, then closes the writer's copies and removes every copy from disk. */
  override async close(): Promise<void> {
    await this.searches.close();
    super.close();
    // A stopped thread never closed its copies: its folder goes with the writer's.
    rmSync(this.folder, { recursive: true, force: true });
  }
}
