/**
 * Search on Lambda, where a process freezes after each answer and many run at once: a write
 * leaves a durable mark (DynamoDB) before it is answered, instead of the one-machine server's
 * in-memory dirty set; a search first indexes its user's marked sessions, so an append is
 * searchable on the next search; a scheduled pass indexes every marked session meanwhile. The
 * indexer of marks itself (`marking-indexer.ts`) lies below both entries: the Node server runs it too.
 */
import { TeamSearch, teamTenants, tenantIndexer } from "@pisync/core";
import type { SearchIndex } from "@pisync/search";
import type { S3SearchIndex } from "@pisync/search/aws";
import type { Stores } from "@pisync/store";
import { lazy } from "./lazy.js";
import { type MarkingIndexer, SEARCH_BUDGET_MS } from "./marking-indexer.js";
import type { SearchDeps } from "./routes/search.js";

/**
 * The search routes' dependencies on Lambda: the index, seen through a search that first
 * catches up the user's marks for at most `searchBudgetMs` (a failed catch-up is logged; either
 * way the index answers as it is: during a rebuild, the sessions indexed so far).
 */
export function lambdaSearch(
  index: SearchIndex,
  indexer: MarkingIndexer,
  log = console.error,
  searchBudgetMs = SEARCH_BUDGET_MS,
  teams?: TeamSearch,
): SearchDeps {
  const searching: SearchIndex = {
    ...forwardTo(async () => index),
    async search(userId, query, options) {
      await indexer
        .catchUpUser(userId, searchBudgetMs)
        .catch((error: Error) => log(`pisync: search catch-up failed: ${error.message}`));
      return index.search(userId, query, options);
    },
  };
  return { index: searching, indexer, teams };
}

/**
 * Teams' search on Lambda: each team a tenant (`~<team>`) of the users' index, fed by the same
 * marks, passes and upkeep (the indexer reads `tenantStores`). A write's lookup of its team is
 * held by the indexer, so the team's mark is written before the answer; a team's search indexes
 * its team's marks first, as a user's does.
 */
export function lambdaTeamSearch(
  stores: Stores,
  index: SearchIndex,
  indexer: MarkingIndexer,
  log = console.error,
  searchBudgetMs = SEARCH_BUDGET_MS,
): TeamSearch | undefined {
  if (!stores.teams) return undefined;
  const catchUp = async (tenant: string) => {
    await indexer
      .catchUpUser(tenant, searchBudgetMs)
      .catch((error: Error) => log(`pisync: team search catch-up failed: ${error.message}`));
  };
  return new TeamSearch(stores, stores.teams, teamTenants(index, catchUp), {
    indexer: tenantIndexer(indexer),
    track: (work) => indexer.hold(work),
    log,
  });
}

/**
 * A search index whose every call goes to the index `get` gives (`applyLines` aside, which an
 * index may lack: callers then fall back to `applyAll`).
 */
function forwardTo(get: () => Promise<SearchIndex>): SearchIndex {
  return {
    state: async (userId, sessionId) => (await get()).state(userId, sessionId),
    states: async (userId, sessionIds) => {
      const index = await get();
      if (index.states) return index.states(userId, sessionIds);
      return Promise.all(sessionIds.map((sessionId) => index.state(userId, sessionId)));
    },
    sessions: async (userId) => (await get()).sessions(userId),
    users: async () => (await get()).users(),
    apply: async (batch) => (await get()).apply(batch),
    applyAll: async (batches) => (await get()).applyAll(batches),
    remove: async (userId, sessionId) => (await get()).remove(userId, sessionId),
    clear: async (userId) => (await get()).clear(userId),
    files: async (userId, sessionId, limit) => (await get()).files(userId, sessionId, limit),
    search: async (userId, query, options) => (await get()).search(userId, query, options),
    upkeep: async (deadline, options) => (await get()).upkeep?.(deadline, options) ?? 0,
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
