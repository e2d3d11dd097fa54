/**
 * The embedded search index with its writes on a worker thread: a server's appends never wait
 * behind indexing. Reading lines into documents and the FTS5 inserts (most of the cost of
 * indexing a byte, about as much as storing it) run on the worker's own connection to the same
 * SQLite file; searches run on reader threads of their own ({@link SearchThreads}: a costly
 * query never holds up the caller's event loop, and each has a time limit); the indexer's state
 * reads run on the caller's connection (WAL: readers see every committed write and never wait
 * for the writer).
 */
import { Worker } from "node:worker_threads";
import { DEFAULT_BOUNDS, type SearchBounds, SqliteSearchIndex } from "./embedded.js";
import type { EmbeddedReaderData } from "./embedded-reader.js";
import type { WriterAnswer, WriterCall } from "./embedded-writer.js";
import type {
  FileTouched,
  IndexBatch,
  IndexState,
  LineSource,
  LinesToIndex,
  SearchIndex,
  SearchOptions,
  SearchPage,
} from "./port.js";
import type { SearchQuery } from "./query.js";
import { DEFAULT_SEARCH_THREADS, SearchThreads, type SearchThreadsOptions, threadFile } from "./search-threads.js";

export { DEFAULT_SEARCH_THREADS, type SearchThreadsOptions } from "./search-threads.js";

/** Heap of the writer thread, in MB: a batch is at most a few MB of lines. */
const WRITER_HEAP_MB = 512;

/** Distributes calls without their `id` over the call union (keeps `method` and `args` paired). */
type Call = WriterCall extends infer C ? (C extends WriterCall ? Omit<C, "id"> : never) : never;

/** The search index on one SQLite file, written by a worker thread (see the module's comment). */
export class ThreadedSearchIndex implements SearchIndex {
  private readonly reader: SqliteSearchIndex;
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private readonly searches: SearchThreads;

  /**
   * Opens (or creates) the index at `path` (a file: the threads open it too); `lines` as
   * {@link SqliteSearchIndex}'s; `searchThreads` say how searches run (threads, time limit);
   * `bounds` bound the work of one query on them.
   */
  constructor(
    private readonly path: string,
    lines: LineSource,
    searchThreads: SearchThreadsOptions = DEFAULT_SEARCH_THREADS,
    bounds: SearchBounds = DEFAULT_BOUNDS,
  ) {
    // Made (schema, file mode) here first, so the other threads only open it.
    this.reader = new SqliteSearchIndex(path, lines);
    const reader = {
      ...threadFile("embedded-reader", import.meta.url),
      workerData: { path, bounds } satisfies EmbeddedReaderData,
    };
    this.searches = new SearchThreads(reader, lines, searchThreads);
  }

  /** The writer, started on first use and again after it died (its calls then failed). */
  private writer(): Worker {
    if (this.worker) return this.worker;
    const { url, execArgv } = threadFile("embedded-writer", import.meta.url);
    const worker = new Worker(url, {
      workerData: { path: this.path },
      execArgv,
      resourceLimits: { maxOldGenerationSizeMb: WRITER_HEAP_MB },
    });
    worker.unref(); // held only while a call waits (see call)
    worker.on("message", (answer: WriterAnswer) => {
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      if (this.pending.size === 0) worker.unref();
      if (answer.error !== undefined) waiting.reject(new Error(answer.error));
      else waiting.resolve(answer.result);
    });
    const died = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on("error", died);
    worker.on("exit", (code) => died(new Error(`the search writer thread stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private call<T>(call: Call, transfer: ArrayBuffer[] = []): Promise<T> {
    const worker = this.writer();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.ref();
      worker.postMessage({ ...call, id }, transfer);
    });
  }

  state(userId: string, sessionId: string): Promise<IndexState | undefined> {
    return this.reader.state(userId, sessionId);
  }

  sessions(userId: string): Promise<Array<IndexState & { sessionId: string }>> {
    return this.reader.sessions(userId);
  }

  users(): Promise<string[]> {
    return this.reader.users();
  }

  files(userId: string, sessionId: string, limit: number): Promise<FileTouched[]> {
    return this.reader.files(userId, sessionId, limit);
  }

  /** Runs on a search thread. @throws SearchTimeout past the time limit (see {@link SearchThreads}) */
  search(userId: string, query: SearchQuery, options: SearchOptions): Promise<SearchPage> {
    return this.searches.search(userId, query, options);
  }

  /** Starts the search threads now and resolves once they are ready (else the first searches start them). */
  warm(): Promise<void> {
    return this.searches.warm();
  }

  /** Search threads alive, those stopped that have not exited yet included (never more than the pool's `threads`). */
  get searchThreadsAlive(): number {
    return this.searches.alive;
  }

  async apply(batch: IndexBatch): Promise<boolean> {
    return (await this.applyAll([batch]))[0];
  }

  applyAll(batches: readonly IndexBatch[]): Promise<boolean[]> {
    return this.call({ method: "applyAll", args: [[...batches]] });
  }

  /** Reads the lines into documents on the writer thread; the bytes are copied to it once. */
  applyLines(items: readonly LinesToIndex[]): Promise<boolean[]> {
    const copies = items.map(({ bytes, at }) => ({ bytes: bytes.slice(), at }));
    return this.call(
      { method: "applyLines", args: [copies] },
      copies.map((item) => item.bytes.buffer as ArrayBuffer),
    );
  }

  remove(userId: string, sessionId: string): Promise<void> {
    return this.call({ method: "remove", args: [userId, sessionId] });
  }

  clear(userId?: string): Promise<void> {
    return this.call({ method: "clear", args: [userId] });
  }

  /** Merges the index's segments and gives freed pages back (after a rebuild). */
  optimize(): Promise<void> {
    return this.call({ method: "optimize", args: [] });
  }

  /** Closes every connection (the writer's last, after the calls before this one) and stops the threads. */
  async close(): Promise<void> {
    await this.searches.close();
    const worker = this.worker;
    if (worker) {
      await this.call({ method: "close", args: [] });
      this.worker = undefined;
      await worker.terminate();
    }
    this.reader.close();
  }
}
