/**
 * Keeps the search index following the stored bytes. The index is derived data: each session's
 * indexed generation and offset say how far it got, so after a crash between an append and its
 * index update a catch-up pass reads the missing lines from the store; a new generation is
 * indexed again from its start; a deleted session's documents go.
 */
import { batchOf, type LineSource, type SearchIndex } from "@pisync/search";
import type { Stores } from "@pisync/store";
import { readRange } from "./segments.js";

/** Bytes read per batch: bounds the memory one catch-up step takes. */
const BATCH_BYTES = 4 * 1024 * 1024;

export class SearchIndexer {
  constructor(
    private readonly stores: Stores,
    private readonly index: SearchIndex,
  ) {}

  /** Brings one session's index up to its stored bytes (or removes it when the session is gone). */
  async sync(userId: string, sessionId: string): Promise<void> {
    const head = await this.stores.meta.getHead(userId, sessionId);
    if (!head) return this.index.remove(userId, sessionId);
    const { generation, length, segments } = head.current;
    let state = await this.index.state(userId, sessionId);
    let from = state && state.generation === generation && state.offset <= length ? state.offset : 0;
    while (from < length) {
      let bytes = await readRange(this.stores.blobs, segments, from, Math.min(length, from + BATCH_BYTES));
      // Whole lines only: cut after the last newline (a longer line is read whole).
      const cut = bytes.lastIndexOf(0x0a);
      if (cut < bytes.length - 1) {
        bytes = cut >= 0 ? bytes.subarray(0, cut + 1) : await readRange(this.stores.blobs, segments, from, length);
      }
      const applied = await this.index.apply(batchOf(bytes, { userId, sessionId, generation, from }));
      if (!applied) {
        // Another indexer moved it: start again from where it stands now.
        state = await this.index.state(userId, sessionId);
        if (!state || state.generation !== generation) from = 0;
        else if (state.offset >= length) return;
        else from = state.offset;
        continue;
      }
      from += bytes.length;
    }
  }

  /**
   * The catch-up pass: every session of the given users (by default every user the index
   * knows) brought up to date, and sessions the store no longer has removed.
   */
  async catchUp(userIds?: readonly string[]): Promise<void> {
    const users = new Set([...(userIds ?? []), ...(await this.index.users())]);
    for (const userId of users) {
      const seen = new Set<string>();
      let cursor: string | undefined;
      do {
        const page = await this.stores.meta.listHeads(userId, { limit: 100, cursor });
        for (const head of page.heads) {
          seen.add(head.sessionId);
          const state = await this.index.state(userId, head.sessionId);
          if (state?.generation !== head.current.generation || state.offset !== head.current.length) {
            await this.sync(userId, head.sessionId);
          }
        }
        cursor = page.cursor;
      } while (cursor);
      for (const { sessionId } of await this.index.sessions(userId)) {
        if (!seen.has(sessionId)) await this.index.remove(userId, sessionId);
      }
    }
  }

  /** Rebuilds a user's index (or everyone's) from the stored bytes. */
  async rebuild(userIds: readonly string[]): Promise<void> {
    for (const userId of userIds) await this.index.clear(userId);
    await this.catchUp(userIds);
  }
}

/** Reads lines of a session's current generation from the store (for snippets); none once the generation moved on. */
export function storedLines(stores: Stores): LineSource {
  return async (userId, sessionId, generation, ranges) => {
    const head = await stores.meta.getHead(userId, sessionId);
    if (!head || head.current.generation !== generation) return ranges.map(() => undefined);
    const { segments, length } = head.current;
    return Promise.all(
      ranges.map((r) =>
        r.offset + r.length <= length ? readRange(stores.blobs, segments, r.offset, r.offset + r.length) : undefined,
      ),
    );
  };
}
