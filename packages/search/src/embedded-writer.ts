/**
 * The worker thread of {@link ThreadedSearchIndex}: owns the index's write connection and does
 * the CPU work of indexing (reading lines into documents, FTS5 inserts) off the event loop.
 * Messages are handled one at a time, in the order they come.
 */
import { parentPort, workerData } from "node:worker_threads";
import { batchOf } from "./documents.js";
import { SqliteSearchIndex } from "./embedded.js";
import type { IndexBatch, LinesToIndex } from "./port.js";

/** A call of the owning thread: `id` pairs it with its answer. */
export type WriterCall = { id: number } & (
  | { method: "applyAll"; args: [IndexBatch[]] }
  | { method: "applyLines"; args: [LinesToIndex[]] }
  | { method: "remove"; args: [string, string] }
  | { method: "clear"; args: [string | undefined] }
  | { method: "optimize"; args: [] }
  | { method: "close"; args: [] }
);

/** The answer to a call: its result, or the message of what it threw. */
export type WriterAnswer = { id: number; result?: unknown; error?: string };

const port = parentPort;
if (port) {
  // Snippets are cut on the reading side: this connection never reads lines.
  const index = new SqliteSearchIndex((workerData as { path: string }).path, async () => []);
  const run = (call: WriterCall): unknown => {
    switch (call.method) {
      case "applyAll":
        return index.applyAll(call.args[0]);
      case "applyLines":
        return index.applyAll(call.args[0].map((item) => batchOf(item.bytes, item.at)));
      case "remove":
        return index.remove(...call.args);
      case "clear":
        return index.clear(call.args[0]);
      case "optimize":
        return index.optimize();
      case "close":
        return index.close();
    }
  };
  port.on("message", async (call: WriterCall) => {
    try {
      port.postMessage({ id: call.id, result: await run(call) } satisfies WriterAnswer);
    } catch (error) {
      port.postMessage({ id: call.id, error: (error as Error).message ?? String(error) } satisfies WriterAnswer);
    }
  });
}
