/**
 * A pool of worker threads (tinypool) for the share's heavy work, on the Node server: the
 * event loop only hands tasks over and gets HTML or masked lines back, so /healthz and other
 * requests answer within milliseconds while a large page renders. A page that takes past
 * `taskTimeoutMs` (queueing included) has its worker stopped (and replaced) and answers 503;
 * masking has no such limit: its batches are bounded in size, and a download waits its turn.
 */
import { availableParallelism } from "node:os";
import { Busy } from "@pisync/core";
import { Tinypool } from "tinypool";
import type { ShareWork } from "./share-work.js";

export interface WorkerPoolOptions {
  /** Threads at most (default: the cores less one, 1 to 4). */
  maxThreads?: number;
  /** Longest a page may take to render, queueing included (default 10 s). */
  taskTimeoutMs?: number;
  /** Heap of one worker, in MB (default 512): a hostile page cannot grow the process past it. */
  maxHeapMb?: number;
}

export interface WorkerPool extends ShareWork {
  /** Tasks the workers finished. */
  readonly completed: number;
  close(): Promise<void>;
}

/**
 * The worker's file: from source (as `npm start` and the tests run), a shim that loads the
 * TypeScript through tsx with the `source` condition; the built file otherwise.
 */
function workerFile(): { filename: string; execArgv?: string[] } {
  if (import.meta.url.endsWith(".ts")) {
    return { filename: new URL("./share-worker.source.mjs", import.meta.url).href, execArgv: ["--conditions=source"] };
  }
  return { filename: new URL("./share-worker.js", import.meta.url).href };
}

/**
 * Starts the worker threads that render share pages and mask lines off the event loop. A page
 * past `taskTimeoutMs` rejects with `Busy` (its worker is replaced); close the pool with
 * `close()` when the server stops.
 */
export function workerPool(options: WorkerPoolOptions = {}): WorkerPool {
  const maxThreads = options.maxThreads ?? Math.min(4, Math.max(1, availableParallelism() - 1));
  const pool = new Tinypool({
    ...workerFile(),
    minThreads: 1,
    maxThreads,
    idleTimeout: 60_000,
    resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 512 },
  });
  const timeout = options.taskTimeoutMs ?? 10_000;
  const run = async <T>(name: keyof ShareWork, task: unknown, limited = false): Promise<T> => {
    try {
      return (await pool.run(task, { name, signal: limited ? AbortSignal.timeout(timeout) : null })) as T;
    } catch (error) {
      if ((error as Error).name === "AbortError" || (error as Error).name === "TimeoutError") {
        throw new Busy("this page took too long to prepare; try again later", 30);
      }
      throw error;
    }
  };
  return {
    renderPage: (input) => run("renderPage", input, true),
    renderEntries: (input) => run("renderEntries", input, true),
    maskLines: (lines) => run("maskLines", lines),
    maskTexts: (texts) => run("maskTexts", texts),
    renderPreview: (card) => run("renderPreview", card, true),
    get completed() {
      return pool.completed;
    },
    close: () => pool.destroy(),
  };
}
