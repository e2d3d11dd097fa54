/**
 * The Lambda entry: the same app, on S3 + DynamoDB. `hono/aws-lambda` translates API Gateway
 * (v1, v2) and function-URL events, decodes base64 bodies and base64-encodes binary answers.
 * A scheduled event (EventBridge) runs a bounded search indexing pass over due marks, and while
 * marks are left the function invokes itself for the next (`{ "pisync": "index", ... }`); a
 * direct invocation with `{ "pisync": "reindex", "users": [...] }` rebuilds those users' indexes.
 */
import { SWEEP_MIN_AGE_MS, storedLines, teamOfTenant, tenantStores, verifyStores } from "@pisync/core";
import { SAFE_ID, TEAM_ID } from "@pisync/protocol";
// The marks alone: the index's module (`@pisync/search/aws`) is a chunk loaded on the first search.
import { type ChainLink, PassChain } from "@pisync/search/aws/chain";
import { LegacyIndexes } from "@pisync/search/aws/legacy";
import { commitMark, SearchMarks } from "@pisync/search/aws/marks";
import type { Commit, MetaStore, Stores } from "@pisync/store";
import { type AwsConnection, awsStores } from "@pisync/store/aws";
import { handle, type LambdaContext, type LambdaEvent } from "hono/aws-lambda";
import { type AppDeps, createApp } from "./app.js";
import { lambdaConfig } from "./config.js";
import { type ContinuePass, type IndexEvent, invokeSelf, isIndexEvent, parseIndexEvent } from "./continue-pass.js";
import { lambdaSearch, lambdaTeamSearch, lazySearchIndex, maintainSearch } from "./lambda-search.js";
import { lazy } from "./lazy.js";
import { INDEX_BUDGET_MS, MarkingIndexer, SEARCH_BUDGET_MS } from "./marking-indexer.js";
import { secretKeys } from "./share-key-secret.js";

/** The handler for a store pair (tests give it the test servers' stores). */
export function createHandler(stores: Stores, options: Omit<AppDeps, "stores"> = {}) {
  return handle(createApp({ stores, bufferResponses: true, ...options }));
}

/** What search needs on AWS: the table of pointers and marks, and where the SDK connects. */
export interface LambdaSearchConfig {
  connection: AwsConnection;
  table: string;
  /** The scheduled pass's time budget for indexing marks (default 6 s; never past the invocation's time). */
  indexBudgetMs?: number;
  /** A search's time budget for indexing its user's marks first (default 2 s). */
  searchBudgetMs?: number;
  /**
   * Whether the stores' commits put their session's search mark in their own transaction
   * (`awsStores({ commitItems: (commit) => [commitMark(commit)] })`, as `init` makes them): an
   * append's mark is then written by its commit, and a write without a commit of its own (a
   * retry, a delete) writes one after it.
   */
  marksInCommits?: boolean;
  /**
   * Starts the next pass at once while marks are due (on Lambda: the function invokes itself);
   * one chain at a time (`PassChain`). Without it, passes follow the schedule only.
   */
  continuePass?: ContinuePass;
}

/** The function's timeout is 15 s (infra): an invocation keeps this much of its remaining time as a margin. */
const MARGIN_MS = 4_000;
/** The sweep event's time when the invocation does not say its remaining time (tests, a local run). */
const SWEEP_BUDGET_MS = 11_000;

/** The time an invocation may spend: `wanted`, within its remaining time less a margin (0 when none is left). */
function budgetOf(context: LambdaContext | undefined, wanted: number): number {
  const remaining = context?.getRemainingTimeInMillis?.();
  return typeof remaining === "number" ? Math.max(0, Math.min(wanted, remaining - MARGIN_MS)) : wanted;
}

/** An EventBridge scheduled event (the rule the stack declares). */
function isScheduled(event: unknown): boolean {
  return (event as { "detail-type"?: unknown })?.["detail-type"] === "Scheduled Event";
}

/** The sweep's schedule (its own EventBridge rule, whose input is this object). */
export const SWEEP_EVENT = { pisync: "sweep" } as const;

function isSweep(event: unknown): boolean {
  return (event as { pisync?: unknown } | undefined)?.pisync === SWEEP_EVENT.pisync;
}

/**
 * The sweep on Lambda: unreferenced segments and abandoned uploads older than an hour removed,
 * heads behind their stored segments rolled forward (no bytes read otherwise: see `verifyStores`).
 */
async function sweep(stores: Stores, budgetMs: number) {
  const report = await verifyStores(stores, {
    repair: true,
    minAgeMs: SWEEP_MIN_AGE_MS,
    budgetMs,
    onFinding: (f) =>
      console.log(
        `pisync: sweep: ${f.kind} ${f.key ?? `${f.userId}/${f.sessionId}`}: ${f.message}${f.repaired ? " (repaired)" : ""}`,
      ),
  });
  return { swept: report.findings.filter((f) => f.repaired).length, wrong: report.wrong, left: report.left };
}

/**
 * A direct invocation that rebuilds users' search indexes from the bytes (`aws lambda invoke`;
 * an HTTP event cannot be one): each index is cleared and its sessions marked; the scheduled
 * pass indexes them over as many invocations as it takes.
 */
interface ReindexEvent {
  pisync: "reindex";
  users: string[];
}

function isReindex(event: unknown): event is ReindexEvent {
  return (event as Partial<ReindexEvent> | undefined)?.pisync === "reindex";
}

/** The users a reindex event names. @throws Error when it does not name them by their ids */
function usersOf(event: ReindexEvent): string[] {
  const { users } = event;
  // A team's tenant (`~<team>`) is rebuilt the same way, from the sessions in the team.
  const named = (u: unknown) => typeof u === "string" && (SAFE_ID.test(u) || TEAM_ID.test(teamOfTenant(u) ?? ""));
  if (!Array.isArray(users) || !users.every(named)) {
    throw new Error('a reindex event is { "pisync": "reindex", "users": [user ids, or ~<team id> for a team] }');
  }
  return users;
}

/** `meta`, with `applied` called after each commit it applied. */
function afterCommits(meta: MetaStore, applied: (commit: Commit) => void): MetaStore {
  return new Proxy(meta, {
    get(target, name) {
      if (name === "commit") {
        return async (commit: Commit) => {
          await target.commit(commit);
          applied(commit);
        };
      }
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The answer when a write is stored but its search mark is not: the client sends it again (and it is marked then). */
const MARK_FAILED = {
  statusCode: 503,
  headers: { "content-type": "application/json", "retry-after": "1" },
  body: JSON.stringify({ error: "the write is stored but not yet marked for search: send it again", code: "busy" }),
  isBase64Encoded: false,
};

/**
 * The handler with search (the function's): writes leave durable marks before they are answered;
 * searches index their user's marks first; scheduled events index every marked session.
 */
export function createSearchingHandler(
  stores: Stores,
  search: LambdaSearchConfig,
  options: Omit<AppDeps, "stores" | "search"> = {},
) {
  // Teams are tenants of the same index: its indexer reads a team's sessions as the team's.
  const indexStores = stores.teams ? tenantStores(stores, stores.teams) : stores;
  // Made when first searched, indexed, cleared or kept up: an append only writes a mark.
  const s3Index = lazy(async () => {
    const { S3SearchIndex } = await import("@pisync/search/aws");
    return new S3SearchIndex({
      connection: search.connection,
      table: search.table,
      blobs: stores.blobs,
      lines: storedLines(indexStores),
    });
  });
  const index = lazySearchIndex(() => s3Index.load());
  const indexer = new MarkingIndexer(
    indexStores,
    index,
    new SearchMarks(search.connection, search.table),
    console.error,
    new LegacyIndexes(search.connection, search.table),
  );
  const searchBudgetMs = search.searchBudgetMs ?? SEARCH_BUDGET_MS;
  // Only a commit that answered is noted: one whose answer was lost (resolved by reading the
  // head) may not have carried this mark, so its write is marked once more.
  const appStores = search.marksInCommits
    ? { ...stores, meta: afterCommits(stores.meta, ({ head }) => indexer.markedByCommit(head.userId, head.sessionId)) }
    : stores;
  const http = handle(
    createApp({
      stores: appStores,
      search: lambdaSearch(
        index,
        indexer,
        console.error,
        searchBudgetMs,
        lambdaTeamSearch(stores, index, indexer, console.error, searchBudgetMs),
      ),
      bufferResponses: true,
      ...options,
    }),
  );
  const chain = new PassChain(search.connection, search.table);
  const send = search.continuePass;
  /** Sends the pass after `held` (a lost one is not retried: the chain's lease runs out and the schedule starts another). */
  const continueAfter = async (held: ChainLink) => {
    await send?.({ pisync: "index", chain: held.chain, seq: held.seq + 1 }).catch((error: Error) =>
      console.error(`pisync: search: the next indexing pass was not started: ${error.message}`),
    );
  };
  /**
   * A pass over due marks (the schedule's, or a chain's link). While marks are due it sends the
   * next pass: a scheduled one starts a chain if none holds the lease; a link that is not its
   * chain's next (delivered twice, or overtaken by a newer chain) does nothing.
   */
  const indexPass = async (link: IndexEvent | undefined, context: LambdaContext) => {
    if (link && !(await chain.claim(link))) return { indexed: 0, left: 0, upgraded: 0, more: false, claimed: false };
    const pass = await indexer.catchUpMarked(budgetOf(context, search.indexBudgetMs ?? INDEX_BUDGET_MS));
    if (!send) {
      if (pass.more) console.log("pisync: search: marked sessions left for the next run");
      return pass;
    }
    const held = link ?? (pass.more ? await chain.start() : undefined);
    if (held && pass.more) await continueAfter(held);
    else if (held) await chain.end(held);
    return pass;
  };
  const handler = async (
    event: LambdaEvent | { "detail-type": "Scheduled Event" } | ReindexEvent | IndexEvent | typeof SWEEP_EVENT,
    context: LambdaContext,
  ) => {
    if (isScheduled(event)) return indexPass(undefined, context);
    if (isIndexEvent(event)) return indexPass(parseIndexEvent(event), context);
    if (isSweep(event)) {
      // The stores' sweep first, then the index's upkeep in what is left: both resume on the next run.
      const deadline = Date.now() + budgetOf(context, SWEEP_BUDGET_MS);
      const swept = await sweep(stores, Math.max(0, deadline - Date.now()) * 0.6);
      const upkeep = await maintainSearch(await s3Index.load(), { budgetMs: Math.max(0, deadline - Date.now()) });
      return { ...swept, search: upkeep };
    }
    if (isReindex(event)) {
      const users = usersOf(event);
      const marked = await indexer.rebuildUsers(users);
      // The first pass at once, not at the schedule's next minute (unless a chain runs already).
      const held = send && marked > 0 ? await chain.start() : undefined;
      if (held) await continueAfter(held);
      return { reindexed: users, marked };
    }
    const response = await http(event as LambdaEvent, context);
    try {
      await indexer.settle();
    } catch (error) {
      console.error(`pisync: a search mark was not written: ${(error as Error).message}`);
      return MARK_FAILED;
    }
    return response;
  };
  // `s3Index`: the adapter itself (made on first use), for its upkeep and for tests.
  return Object.assign(handler, { index, s3Index: () => s3Index.load() });
}

/** What the function is invoked with: an HTTP event, or the indexer's schedule. */
type FunctionEvent = Parameters<ReturnType<typeof createSearchingHandler>>[0];

let cached: ReturnType<typeof createSearchingHandler> | undefined;

/**
 * Sets the function up from its environment, once per container: the SDK clients (each keeps
 * its connections open between requests) and the app with search. The handler calls it on the
 * first event (importing the module does nothing else); `npm run bench:bundle` calls it to time
 * it apart.
 * @throws Error when the environment lacks a setting (see `lambdaConfig`).
 */
export function init(): ReturnType<typeof createSearchingHandler> {
  if (!cached) {
    const config = lambdaConfig();
    // One DynamoDB client for the metadata, the search marks and the index: one set of
    // settings resolved, one connection opened, on the first request.
    const connection = { ...config.connection, shared: {} };
    // Each commit carries its session's search mark: an append makes no round trip for it.
    const commitItems = (commit: Commit) => [commitMark(commit)];
    cached = createSearchingHandler(
      awsStores({ ...connection, bucket: config.bucket, table: config.table, commitItems }),
      {
        connection,
        table: config.table,
        indexBudgetMs: config.indexBudgetMs,
        marksInCommits: true,
        continuePass: config.functionName ? invokeSelf(connection, config.functionName) : undefined,
      },
      {
        shareKeys: secretKeys(connection, config.shareKeySecret),
        maxShareDays: config.maxShareDays,
        publicUrl: config.publicUrl,
      },
    );
  }
  return cached;
}

/** The Lambda handler: the app (and the search indexer's schedule), set up on the first event. */
export const handler = (event: FunctionEvent, context: LambdaContext) => init()(event, context);
