/**
 * The reader's side of {@link SearchThreads} (what a reader thread's file runs): it asks the
 * owning thread, by message, for what only that thread holds (stored lines, blobs, credentials)
 * and answers the searches it is sent. The messages of both sides are declared here.
 */
import { parentPort } from "node:worker_threads";
import { NotFoundError, StorageUnavailableError } from "@pisync/store";
import type { SearchOptions, SearchPage } from "./port.js";
import { QueryError, type SearchQuery, SearchTimeout } from "./query.js";

/** A search asked of the reader; `id` pairs it with its answer. */
export interface ReaderCall {
  id: number;
  userId: string;
  query: SearchQuery;
  /** `deadline`: epoch ms at which the search stops (see {@link SearchOptions}). */
  options: SearchOptions;
}

/** The reader's messages: ready, a search's answer, or a question for the owning thread. */
export type ReaderMessage =
  | { ready: true }
  | { id: number; result: SearchPage }
  | { id: number; error: string; queryError: boolean; unavailable: boolean; timeout?: boolean }
  | { ask: number; name: string; args: unknown[] };

/**
 * The owning thread's answer to a question (`notFound`: the key of a NotFoundError;
 * `unavailable`: the error was a StorageUnavailableError, a 503 and not a crash on either side).
 */
export type AskAnswer = { answer: number; result?: unknown; error?: string; notFound?: string; unavailable?: boolean };

const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let next = 0;

/** Asks the owning thread to run its `name` (see {@link SearchThreads}' `asks`) with `args`. */
export function askOwner<T>(name: string, ...args: unknown[]): Promise<T> {
  const port = parentPort;
  if (!port) return Promise.reject(new Error("not on a search thread"));
  return new Promise<T>((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
    port.postMessage({ ask: id, name, args } satisfies ReaderMessage);
  });
}

/** Tells the owning thread this reader is ready, then runs every search it is sent with `search`. */
export function serveSearches(
  search: (userId: string, query: SearchQuery, options: ReaderCall["options"]) => Promise<SearchPage>,
): void {
  const port = parentPort;
  if (!port) return;
  port.postMessage({ ready: true } satisfies ReaderMessage);
  port.on("message", async (message: ReaderCall | AskAnswer) => {
    if ("answer" in message) {
      const asked = waiting.get(message.answer);
      waiting.delete(message.answer);
      if (message.notFound !== undefined) asked?.reject(new NotFoundError(message.notFound));
      else if (message.error !== undefined)
        asked?.reject(message.unavailable ? new StorageUnavailableError(message.error) : new Error(message.error));
      else asked?.resolve(message.result);
      return;
    }
    try {
      const result = await search(message.userId, message.query, message.options);
      port.postMessage({ id: message.id, result } satisfies ReaderMessage);
    } catch (error) {
      const queryError = error instanceof QueryError;
      const unavailable = error instanceof StorageUnavailableError;
      port.postMessage({
        id: message.id,
        error: (error as Error).message,
        queryError,
        unavailable,
        // Its deadline passed (before the owner's timer said so, on a busy machine).
        timeout: error instanceof SearchTimeout,
      } satisfies ReaderMessage);
    }
  });
}
