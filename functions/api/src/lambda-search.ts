/**
 * Search on Lambda, where a process freezes after each answer and many run at once: a write
 * leaves a durable mark (DynamoDB) before it is answered, instead of the one-machine server's
 * in-memory dirty set; a search first indexes its user's marked sessions, so an append is
 * searchable on the next search; a scheduled pass indexes every marked session meanwhile.
 */
import { SearchIndexer } from "@pisync/core";
import type { SearchIndex } from "@pisync/search";
import type { S3SearchIndex, SearchMarks, SessionMark } from "@pisync/search/aws";
import type { Stores } from "@pisync/store";
import { lazy } from "./lazy.js";
import type { SearchDeps } from "./routes/search.js";

/** An indexer whose `markDirty` writes a durable mark; the answer waits for it ({@link MarkingIndexer.settle}). */
export class MarkingIndexer extends SearchIndexer {
  /** Mark writes in flight, each settled to its error (or undefined): none is left unhandled. */
  private pending: Array<Promise<Error | undefined>> = [];
  /**
   * The drain of marked sessions, kept for the instance's life: a session that failed waits for
   * its retry time (recorded here) instead of being tried, and logged, at every search and pass.
   */
  private readonly marked: SearchIndexer;

  constructor(
    private readonly storesOf: Stores,
    private readonly indexOf: SearchIndex,
    private readonly marks: SearchMarks,
    private readonly log: (line: string) => void = console.error,
  ) {
    super(storesOf, indexOf, { log });
    this.marked = new SearchIndexer(storesOf, indexOf, { drainDelayMs: 0, log });
  }

  /** Starts writing the session's mark (never indexes here: the process may freeze right after). */
  override markDirty(userId: string, sessionId: string): void {
    this.pending.push(
      this.marks.mark(userId, sessionId).then(
        () => undefined,
        (error: Error) => error,
      ),
    );
  }

  /** Waits for the marks written during a request. @throws the first failed write's error */
  async settle(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    const failed = (await Promise.all(pending)).find((error) => error !== undefined);
    if (failed) throw failed;
  }

  /** Indexes a user's marked sessions and removes the marks of those now up to date. */
  async catchUpUser(userId: string): Promise<void> {
    await this.catchUpMarks(await this.marks.ofUser(userId));
  }

  /** Indexes every marked session of every user (the scheduled pass). */
  async catchUpMarked(): Promise<void> {
    const byUser = new Map<string, SessionMark[]>();
    for (const mark of await this.marks.all()) byUser.set(mark.userId, [...(byUser.get(mark.userId) ?? []), mark]);
    for (const marks of byUser.values()) {
      await this.catchUpMarks(marks).catch((error: Error) =>
        this.log(`pisync: search catch-up of a user failed: ${error.message}`),
      );
    }
  }

  /**
   * Rebuilds users' indexes from the stored bytes: every session of a user in drains of many
   * sessions at once (one new index file per drain step, not one per session).
   */
  async rebuildUsers(userIds: readonly string[]): Promise<void> {
    for (const userId of userIds) {
      await this.indexOf.clear(userId);
      const drain = new SearchIndexer(this.storesOf, this.indexOf, { drainDelayMs: 0, log: this.log });
      let cursor: string | undefined;
      do {
        const page = await this.storesOf.meta.listHeads(userId, { limit: 100, cursor });
        for (const head of page.heads) drain.markDirty(userId, head.sessionId);
        cursor = page.cursor;
      } while (cursor);
      await drain.flush();
    }
  }

  /** One drain for the marks (one new index file per user), then each mark checked before it goes. */
  private async catchUpMarks(marks: readonly SessionMark[]): Promise<void> {
    if (marks.length === 0) return;
    for (const mark of marks) this.marked.markDirty(mark.userId, mark.sessionId);
    await this.marked.flush();
    for (const mark of marks) {
      const head = await this.storesOf.meta.getHead(mark.userId, mark.sessionId);
      const state = await this.indexOf.state(mark.userId, mark.sessionId);
      const current = head
        ? state?.generation === head.current.generation && state.offset === head.current.length
        : state === undefined;
      // A session the drain could not index keeps its mark: the next pass tries again.
      if (current) await this.marks.done(mark);
    }
  }
}

/**
 * The search routes' dependencies on Lambda: the index, seen through a search that first
 * catches up the user's marks (a failed catch-up is logged and the index answers as it is).
 */
export function lambdaSearch(index: SearchIndex, indexer: MarkingIndexer, log = console.error): SearchDeps {
  const searching: SearchIndex = {
    ...forwardTo(async () => index),
    async search(userId, query, options) {
      await indexer
        .catchUpUser(userId)
        .catch((error: Error) => log(`pisync: search catch-up failed: ${error.message}`));
      return index.search(userId, query, options);
    },
  };
  return { index: searching, indexer };
}

/**
 * A search index whose every call goes to the index `get` gives (`applyLines` aside, which an
 * index may lack: callers then fall back to `applyAll`).
 */
function forwardTo(get: () => Promise<SearchIndex>): SearchIndex {
  return {
    state: async (userId, sessionId) => (await get()).state(userId, sessionId),
    sessions: async (userId) => (await get()).sessions(userId),
    users: async () => (await get()).users(),
    apply: async (batch) => (await get()).apply(batch),
    applyAll: async (batches) => (await get()).applyAll(batches),
    remove: async (userId, sessionId) => (await get()).remove(userId, sessionId),
    clear: async (userId) => (await get()).clear(userId),
    files: async (userId, sessionId, limit) => (await get()).files(userId, sessionId, limit),
    search: async (userId, query, options) => (await get()).search(userId, query, options),
  };
}

/** A search index that can be closed (its open files and database handles). */
export type ClosableIndex = SearchIndex & { close(): void };

/**
 * The index `load` makes, made on its first call: its module (SQLite on WebAssembly, the
 * index files) is imported then, so a cold start whose request does not search (an append:
 * it only writes a mark) neither reads nor sets it up. A failed load is tried again on the next call.
 */
export function lazySearchIndex(load: () => Promise<ClosableIndex>): ClosableIndex {
  const index = lazy(load);
  return { ...forwardTo(() => index.load()), close: () => index.loaded()?.close() };
}

/** What {@link maintainSearch} did. */
export interface SearchUpkeep {
  compacted: number;
  removed: number;
  /** Users left for the next run (the time budget ran out). */
  left: number;
}

/**
 * The search index's upkeep, on the sweep's schedule (never a request): each user's log folded
 * into a new base, then the objects no pointer names any more (and older than the sweep's
 * minimum age) removed. Users are visited from a random one on, until `budgetMs` is spent, so a
 * run that stops early leaves others first for the next.
 */
export async function maintainSearch(
  index: S3SearchIndex,
  options: { budgetMs?: number; minAgeMs?: number; log?: (line: string) => void } = {},
): Promise<SearchUpkeep> {
  const { budgetMs = 10_000, minAgeMs, log = console.error } = options;
  const deadline = Date.now() + budgetMs;
  const users = await index.users();
  const start = Math.floor(Math.random() * users.length);
  const upkeep: SearchUpkeep = { compacted: 0, removed: 0, left: 0 };
  for (let i = 0; i < users.length; i++) {
    if (Date.now() >= deadline) {
      upkeep.left = users.length - i;
      break;
    }
    const userId = users[(start + i) % users.length] as string;
    try {
      if (await index.compact(userId)) upkeep.compacted++;
      upkeep.removed += (await index.sweep(userId, minAgeMs)).removed;
    } catch (error) {
      log(`pisync: search upkeep of a user failed: ${(error as Error).message}`);
    }
  }
  return upkeep;
}
