/**
 * Searches on worker threads of their own ({@link SearchThreads}), so that no query, however
 * costly, holds up the server's event loop (its other requests, `/healthz`); each search has a
 * time limit, after which it rejects with {@link SearchTimeout}. The thread is told the same
 * deadline and stops its statement there itself (the index checks it as rows go by); one that
 * has not answered within a grace period is stopped, and it keeps its place in the pool until
 * it has exited: threads alive never exceed `threads`, however many searches ran past their
 * limit. Searches wait for a free thread in a bounded queue (one more is refused at once).
 */
import { Worker } from "node:worker_threads";
import { NotFoundError, StorageUnavailableError } from "@pisync/store";
import type { LineSource, SearchOptions, SearchPage } from "./port.js";
import { QueryError, type SearchQuery, SearchTimeout } from "./query.js";
import type { AskAnswer, ReaderCall, ReaderMessage } from "./reader-thread.js";

/** How searches run: threads, time limit, searches waiting at most. */
export interface SearchThreadsOptions {
  /** Searches running at once (each on a thread and connection of its own). */
  threads: number;
  /** Milliseconds a search may run on its thread before it answers {@link SearchTimeout}. */
  timeLimitMs: number;
  /** Searches waiting for a thread at most: one more is refused at once. */
  queue: number;
  /** Searches of one user waiting or running at most: one user's costly queries never fill the queue. */
  perUser: number;
  /**
   * Searches of one user running at once at most (default 1): with two threads or more, one
   * user's costly searches never hold every thread, so another user's search starts at once.
   */
  runningPerUser?: number;
  /**
   * Milliseconds a thread has after the time limit to stop its statement and answer (default
   * 1000); past them it is stopped, and still counted until it has exited.
   */
  graceMs?: number;
}

/**
 * Two threads (beside the server's loop and the index's writer: a small machine's cores), one
 * of them at most per user, 5 s, 32 waiting, 8 per user.
 */
export const DEFAULT_SEARCH_THREADS: SearchThreadsOptions = {
  threads: 2,
  timeLimitMs: 5000,
  queue: 32,
  perUser: 8,
  runningPerUser: 1,
};

/** Heap of a reader thread, in MB: a page's lines and snippets. */
const READER_HEAP_MB = 256;

interface Job {
  call: Omit<ReaderCall, "id">;
  resolve: (page: SearchPage) => void;
  reject: (error: Error) => void;
  /** Set once the search runs on a thread. */
  timer?: ReturnType<typeof setTimeout>;
  slot?: Slot;
}

interface Slot {
  worker: Worker;
  job?: Job;
  /** Resolves once the thread has opened the index (`isReady` then). */
  ready: Promise<void>;
  isReady: boolean;
  /** Its search passed the time limit and was answered: the thread is given the grace period to stop. */
  draining?: ReturnType<typeof setTimeout>;
  /** Stopped: it holds its place until it has exited (it may be deep in a statement). */
  retired?: boolean;
}

/** Which reader a thread runs: its file (see {@link threadFile}) and what it is started with. */
export interface ReaderThread {
  url: URL;
  execArgv?: string[];
  /** Cloned to each thread, with `thread`: the number of its slot (a folder of its own, say). */
  workerData: Record<string, unknown>;
}

/**
 * A thread's file `name` beside the module at `base` (its `import.meta.url`): from source, a
 * shim that loads the TypeScript through tsx with the `source` condition; the built file otherwise.
 */
export function threadFile(name: string, base: string): { url: URL; execArgv?: string[] } {
  if (base.endsWith(".ts")) return { url: new URL(`./${name}.source.mjs`, base), execArgv: ["--conditions=source"] };
  return { url: new URL(`./${name}.js`, base) };
}

/** What a reader may ask of the owning thread, by name (`lines` always: the stored lines of snippets). */
export type OwnerAnswers = Record<string, (...args: never[]) => Promise<unknown>>;

/** A result's bytes copied once into buffers of their own, to be moved to a thread (not copied again). */
function movable(result: unknown): { result: unknown; transfer: ArrayBuffer[] } {
  if (result instanceof Uint8Array) {
    const copy = result.slice();
    return { result: copy, transfer: [copy.buffer as ArrayBuffer] };
  }
  if (Array.isArray(result) && result.some((item) => item instanceof Uint8Array)) {
    const copies = result.map((item) => (item instanceof Uint8Array ? item.slice() : item));
    return {
      result: copies,
      transfer: copies.flatMap((item) => (item instanceof Uint8Array ? [item.buffer as ArrayBuffer] : [])),
    };
  }
  return { result, transfer: [] };
}

/** A pool of search threads, each running one reader. */
export class SearchThreads {
  private readonly slots: Array<Slot | undefined>;
  private readonly queue: Job[] = [];
  /** Searches waiting or running, by user. */
  private readonly ofUser = new Map<string, number>();
  /** When each user's last search started (a count): the next search is of the user served least recently. */
  private readonly served = new Map<string, number>();
  private starts = 0;
  /** Threads started and not exited yet. */
  private running = 0;
  private nextId = 0;
  private closed = false;

  private readonly answers: OwnerAnswers;

  /**
   * Threads running `reader`; `lines` answers a reader's requests for stored lines, `answers`
   * its other questions (a blob, credentials: what the thread cannot hold itself).
   */
  constructor(
    private readonly reader: ReaderThread,
    lines: LineSource,
    private readonly options: SearchThreadsOptions = DEFAULT_SEARCH_THREADS,
    answers: OwnerAnswers = {},
  ) {
    this.slots = new Array(options.threads).fill(undefined);
    this.answers = { ...answers, lines: lines as OwnerAnswers[string] };
  }

  /** Runs a search on a thread. @throws QueryError for a malformed cursor; SearchTimeout past the time limit or with too many waiting */
  search(userId: string, query: SearchQuery, options: Omit<SearchOptions, "deadline">): Promise<SearchPage> {
    if (this.closed) return Promise.reject(new Error("the search threads are closed"));
    if (this.queue.length >= this.options.queue) {
      return Promise.reject(new SearchTimeout("too many searches are waiting: try again in a moment"));
    }
    if ((this.ofUser.get(userId) ?? 0) >= this.options.perUser) {
      return Promise.reject(new SearchTimeout("your earlier searches are still running: try again in a moment"));
    }
    this.ofUser.set(userId, (this.ofUser.get(userId) ?? 0) + 1);
    const done = () => {
      const left = (this.ofUser.get(userId) ?? 1) - 1;
      if (left > 0) this.ofUser.set(userId, left);
      else this.ofUser.delete(userId);
    };
    return new Promise<SearchPage>((resolve, reject) => {
      this.queue.push({ call: { userId, query, options }, resolve, reject });
      this.dispatch();
    }).finally(done);
  }

  /** Starts every thread now (a server's first searches then pay no start-up); resolves once they are ready. */
  async warm(): Promise<void> {
    await Promise.all(this.slots.map((slot, i) => (slot ?? this.start(i)).ready));
  }

  /** Threads started that have not exited yet: serving, starting, or stopped (never more than `threads`). */
  get alive(): number {
    return this.running;
  }

  /** Threads stopped past their grace period that have not exited yet (counted in {@link alive}). */
  get retired(): number {
    return this.slots.filter((slot) => slot?.retired).length;
  }

  /** Stops every thread; searches still waiting or running reject. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job, new Error("the search threads are closed"));
    await Promise.all(
      this.slots.map(async (slot, i) => {
        this.slots[i] = undefined;
        if (slot?.job) this.settle(slot.job, new Error("the search threads are closed"));
        clearTimeout(slot?.draining);
        await slot?.worker.terminate();
      }),
    );
  }

  /**
   * The time limit passed: the search answers SearchTimeout. Its thread stops the statement at
   * the same deadline and answers; one that has not within the grace period is stopped.
   */
  private expire(job: Job): void {
    const slot = job.slot;
    this.settle(job, this.timedOut());
    if (slot) slot.draining = setTimeout(() => this.retire(slot), this.options.graceMs ?? 1000);
    this.dispatch(); // the user's next search may run on another thread now
  }

  private timedOut(): SearchTimeout {
    return new SearchTimeout(`the search took longer than ${this.options.timeLimitMs} ms: narrow it or try again`);
  }

  private settle(job: Job, outcome: Error | SearchPage): void {
    clearTimeout(job.timer);
    if (job.slot?.job === job) job.slot.job = undefined;
    job.slot = undefined;
    if (outcome instanceof Error) job.reject(outcome);
    else job.resolve(outcome);
  }

  /**
   * Stops a slot's thread past its grace period. It keeps its place (counted as alive) until it
   * has exited, which a thread deep in native code does only once that returns: a thread that
   * will not stop never makes room for another.
   */
  private retire(slot: Slot): void {
    slot.draining = undefined;
    slot.retired = true;
    slot.worker.unref();
    void slot.worker.terminate();
  }

  private dispatch(): void {
    for (let i = 0; i < this.slots.length && this.queue.length > 0; i++) {
      const slot = this.slots[i] ?? this.start(i);
      // A starting thread takes searches once ready; a draining or stopped one takes none.
      if (slot.job || !slot.isReady || slot.draining || slot.retired) continue;
      const job = this.next();
      if (!job) return; // every waiting user has their searches running already
      job.slot = slot;
      slot.job = job;
      const deadline = Date.now() + this.options.timeLimitMs;
      job.timer = setTimeout(() => this.expire(job), this.options.timeLimitMs);
      slot.worker.ref();
      slot.worker.postMessage({
        ...job.call,
        options: { ...job.call.options, deadline },
        id: this.nextId++,
      } satisfies ReaderCall);
    }
  }

  /** Searches of a user running now. */
  private runningOf(userId: string): number {
    return this.slots.filter((slot) => slot?.job?.call.userId === userId).length;
  }

  /**
   * Takes the waiting search of the user served least recently (first asked among theirs): users
   * take turns; a user already running `runningPerUser` searches waits for one of them to end.
   */
  private next(): Job | undefined {
    const most = this.options.runningPerUser ?? Number.POSITIVE_INFINITY;
    let best = -1;
    for (let i = 0; i < this.queue.length; i++) {
      const turn = (job: Job) => this.served.get(job.call.userId) ?? -1;
      if (this.runningOf(this.queue[i].call.userId) >= most) continue;
      if (best < 0 || turn(this.queue[i]) < turn(this.queue[best])) best = i;
    }
    if (best < 0) return undefined;
    const [job] = this.queue.splice(best, 1) as [Job];
    this.served.delete(job.call.userId); // kept in the order served: the first is the least recent
    this.served.set(job.call.userId, this.starts++);
    if (this.served.size > 4 * this.options.queue) this.served.delete(this.served.keys().next().value as string);
    return job;
  }

  private start(at: number): Slot {
    const { url, execArgv, workerData } = this.reader;
    const worker = new Worker(url, {
      workerData: { ...workerData, thread: at },
      execArgv,
      resourceLimits: { maxOldGenerationSizeMb: READER_HEAP_MB },
    });
    worker.unref(); // held only while a search runs
    this.running++;
    worker.once("exit", () => this.running--);
    let ready = () => {};
    const slot: Slot = { worker, ready: new Promise((resolve) => (ready = resolve)), isReady: false };
    this.slots[at] = slot;
    worker.on("message", (message: ReaderMessage) => {
      if ("ready" in message) {
        slot.isReady = true;
        ready();
        this.dispatch();
        return;
      }
      if ("ask" in message) {
        void this.answer(worker, message.ask, message.name, message.args);
        return;
      }
      if (slot.retired) return;
      if (slot.draining) {
        // The search past its limit stopped (answered already): the thread takes the next one.
        clearTimeout(slot.draining);
        slot.draining = undefined;
        worker.unref();
        this.dispatch();
        return;
      }
      const job = slot.job;
      if (!job) return;
      worker.unref();
      if ("error" in message)
        this.settle(
          job,
          message.timeout
            ? this.timedOut()
            : message.queryError
              ? new QueryError(message.error)
              : message.unavailable
                ? new StorageUnavailableError(message.error)
                : new Error(message.error),
        );
      else this.settle(job, message.result);
      this.dispatch();
    });
    const died = (error: Error) => {
      ready(); // nobody waits for a dead thread
      clearTimeout(slot.draining);
      slot.draining = undefined;
      if (slot.job) this.settle(slot.job, error);
      if (this.slots[at] === slot) this.slots[at] = undefined;
      if (this.closed) return;
      // A thread that could not even start would fail again: the waiting searches fail with it.
      if (!slot.isReady) for (const job of this.queue.splice(0)) job.reject(error);
      else this.dispatch();
    };
    worker.on("error", died);
    worker.on("exit", (code) => died(new Error(`a search thread stopped (exit code ${code})`)));
    return slot;
  }

  /** Answers a thread's question (stored lines, a blob…); bytes are moved to it, not copied twice. */
  private async answer(worker: Worker, id: number, name: string, args: unknown[]): Promise<void> {
    let answer: AskAnswer;
    let transfer: ArrayBuffer[] = [];
    try {
      const run = this.answers[name];
      if (!run) throw new Error(`a search thread asked for ${name}, which nothing answers`);
      const moved = movable(await (run as (...args: unknown[]) => Promise<unknown>)(...args));
      transfer = moved.transfer;
      answer = { answer: id, result: moved.result };
    } catch (error) {
      answer =
        error instanceof NotFoundError
          ? { answer: id, notFound: error.key }
          : { answer: id, error: (error as Error).message, unavailable: error instanceof StorageUnavailableError };
    }
    try {
      worker.postMessage(answer, transfer);
    } catch {
      // The thread was stopped meanwhile (its search timed out).
    }
  }
}
