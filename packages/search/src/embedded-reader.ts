/**
 * A search reader thread of {@link SearchThreads}: runs searches on its own read connection to
 * the index, off the server's event loop. Stored lines (for snippets) are asked of the owning
 * thread, which holds the store; cutting snippets from them happens here.
 */
import { parentPort, workerData } from "node:worker_threads";
import { SqliteSearchIndex } from "./embedded.js";
import type { LineAt, SearchPage } from "./port.js";
import { QueryError, type SearchQuery } from "./query.js";

/** A search asked of the reader; `id` pairs it with its answer. */
export interface ReaderCall {
  id: number;
  userId: string;
  query: SearchQuery;
  options: { limit: number; cursor?: string };
}

/** The reader's messages: a search's answer, or a request for stored lines. */
export type ReaderMessage =
  | { ready: true }
  | { id: number; result: SearchPage }
  | { id: number; error: string; queryError: boolean }
  | { lines: number; args: [string, string, number, LineAt[]] };

/** The owning thread's answer to a request for lines. */
export type LinesAnswer = { lines: number; result?: Array<Uint8Array | undefined>; error?: string };

const port = parentPort;
if (port) {
  const waiting = new Map<
    number,
    { resolve: (v: Array<Uint8Array | undefined>) => void; reject: (e: Error) => void }
  >();
  let next = 0;
  const index = new SqliteSearchIndex(
    (workerData as { path: string }).path,
    (userId, sessionId, generation, ranges) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        port.postMessage({ lines: id, args: [userId, sessionId, generation, [...ranges]] } satisfies ReaderMessage);
      }),
  );
  port.postMessage({ ready: true } satisfies ReaderMessage);
  port.on("message", async (message: ReaderCall | LinesAnswer) => {
    if ("lines" in message) {
      const request = waiting.get(message.lines);
      waiting.delete(message.lines);
      if (message.error !== undefined) request?.reject(new Error(message.error));
      else request?.resolve(message.result ?? []);
      return;
    }
    try {
      const result = await index.search(message.userId, message.query, message.options);
      port.postMessage({ id: message.id, result } satisfies ReaderMessage);
    } catch (error) {
      const queryError = error instanceof QueryError;
      port.postMessage({ id: message.id, error: (error as Error).message, queryError } satisfies ReaderMessage);
    }
  });
}
