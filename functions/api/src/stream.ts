/** Answers sent as they are made: a body pulled from an async generator of text, one piece at a time. */
import { stringifyJson } from "@pisync/core";

/** A byte stream of `pieces`, each made only when the client has taken the previous one. */
export function textStream(pieces: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await pieces.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await pieces.return(undefined);
    },
  });
}

/**
 * A stream whose first piece is already made: what fails before any byte (an unknown entry, a
 * missing session) is still an HTTP error, not a broken body.
 */
export async function started(pieces: AsyncGenerator<string>): Promise<AsyncGenerator<string>> {
  const first = await pieces.next();
  return (async function* () {
    if (!first.done) yield first.value;
    yield* pieces;
  })();
}

/**
 * A rebuilt context as JSON text, a batch of messages at a time: `{"messages":[…],` then the
 * members of `rest()` (asked only once every message is out: a share's masked count is known
 * only then). The bytes are `JSON.stringify({ messages, ...rest() })`'s.
 */
export async function* contextJson(
  batches: AsyncIterable<unknown[]>,
  rest: () => Record<string, unknown>,
): AsyncGenerator<string> {
  yield '{"messages":[';
  let first = true;
  for await (const messages of batches) {
    if (!messages.length) continue;
    // A value nested past the call stack (pi keeps it, and its context holds it) is written too.
    yield `${first ? "" : ","}${messages.map((m) => stringifyJson(m)).join(",")}`;
    first = false;
  }
  const tail = JSON.stringify(rest());
  yield `]${tail === "{}" ? "}" : `,${tail.slice(1)}`}`;
}
