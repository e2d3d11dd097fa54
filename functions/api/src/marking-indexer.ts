/**
 * The indexer of marked sessions, which both entries run: on Lambda a write leaves a durable mark
 * (DynamoDB) before it is answered, instead of the one-machine server's in-memory dirty set, and
 * marks are indexed in bounded passes; `npm start -- --store aws` runs the same passes back to back.
 */
import { SearchIndexer } from "@pisync/core";
import type { SearchIndex } from "@pisync/search";
import type { SearchMarks, SessionMark } from "@pisync/search/aws";
import type { LegacyIndex, LegacyIndexes } from "@pisync/search/aws/legacy";
import type { Stores } from "@pisync/store";

/**
 * Sessions one bounded step indexes (each one batch of lines at most: see `SearchIndexer.step`),
 * in one log entry: a pass's first step takes the fewest; each next one takes twice as many
 * while a step took under a quarter of the time left (fewer, larger entries: fewer pointer
 * writes and compactions in a rebuild), half as many when it took more than half. Its bytes
 * follow the pass's rate within the bounds below.
 */
const STEP_SESSIONS = { first: 8, max: 64 };
const STEP_MIN_BYTES = 128 * 1024;
const STEP_MAX_BYTES = 4 * 1024 * 1024;
/** The indexing rate a pass assumes before its first step (bytes of lines per ms: a loaded machine's). */
const FIRST_BYTES_PER_MS = 300;
/** Marks removed or put off at once. */
const MARKS_AT_ONCE = 16;
/** Marks a scheduled pass reads at most (oldest due first): more than a pass indexes in its budget. */
export const MARKS_PER_PASS = 512;
/** Marks of its user a search reads at most before it indexes them. */
const MARKS_PER_SEARCH = 64;
/** The scheduled pass's time budget by default, and a search's for its user's marks. */
export const INDEX_BUDGET_MS = 6_000;
export const SEARCH_BUDGET_MS = 2_000;

/** How long a scheduled pass that found no index of the older layout trusts that (see `MarkingIndexer`). */
const LEGACY_RECHECK_MS = 3_600_000;

/** What a bounded pass over marks did. */
export interface MarkPass {
  /** Marks removed: their sessions are up to date. */
  indexed: number;
  /** Marks left for the next pass (the budget ran out, or their session failed and waits for its retry). */
  left: number;
  /** Users whose index of the older layout was upgraded (their sessions marked). */
  upgraded: number;
  /**
   * Whether marks are still due (a pass of the schedule: the budget ran out, or it read only
   * a bounded number of them): another pass may start at once. Marks of sessions that failed
   * are put off, so they alone never make it true.
   */
  more: boolean;
}

/**
 * An indexer whose `markDirty` writes a durable mark; the answer waits for it ({@link MarkingIndexer.settle}).
 * Marks are indexed in bounded steps until a time budget is spent (a search: its user's; the
 * scheduled pass: every user's, oldest first, in turns); what is left keeps its mark for the next run.
 */
export class MarkingIndexer extends SearchIndexer {
  /** Mark writes in flight, each settled to its error (or undefined): none is left unhandled. */
  private pending: Array<Promise<Error | undefined>> = [];
  /**
   * The steps over marked sessions, kept for the instance's life: a session that failed waits
   * for its retry time (recorded here) instead of being tried, and logged, at every search and pass.
   */
  private readonly marked: SearchIndexer;
  /** Users seen with an index of the current layout: never of the older one again. */
  private readonly current = new Set<string>();
  /**
   * When a scheduled pass of this instance last found no index of the older layout left: only
   * an instance of the previous version, still running at a deploy, could write one, so the
   * query of every pointer runs again only after {@link LEGACY_RECHECK_MS}.
   */
  private upgradedAllAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly storesOf: Stores,
    private readonly indexOf: SearchIndex,
    private readonly marks: SearchMarks,
    private readonly log: (line: string) => void = console.error,
    /** Finds indexes of the older layout to upgrade (none looked for when absent). */
    private readonly legacy?: LegacyIndexes,
  ) {
    super(storesOf, indexOf, { log });
    this.marked = new SearchIndexer(storesOf, indexOf, { drainDelayMs: 0, log });
  }

  /**
   * Sessions a commit of this request marked in its own transaction (see `LambdaSearchConfig`'s
   * `marksInCommits`): their write needs no mark of its own. Forgotten at {@link settle}.
   */
  private readonly markedByCommits = new Set<string>();

  /** Notes that an applied commit carried the session's mark. */
  markedByCommit(userId: string, sessionId: string): void {
    this.markedByCommits.add(`${userId}/${sessionId}`);
  }

  /**
   * Starts writing the session's mark (never indexes here: the process may freeze right after),
   * unless a commit of this request already wrote it.
   */
  override markDirty(userId: string, sessionId: string): void {
    if (this.markedByCommits.delete(`${userId}/${sessionId}`)) return;
    this.pending.push(
      this.marks.mark(userId, sessionId).then(
        () => undefined,
        (error: Error) => error,
      ),
    );
  }

  /**
   * Holds the answer for `work` too (a write's lookup of its team, which then marks the team's
   * tenant): {@link settle} waits for it and for the marks it leaves.
   */
  hold(work: Promise<unknown>): void {
    this.pending.push(
      work.then(
        () => undefined,
        (error: Error) => error,
      ),
    );
  }

  /** Waits for the marks written during a request (and those held work wrote meanwhile). @throws the first failed write's error */
  async settle(): Promise<void> {
    let failed: Error | undefined;
    while (this.pending.length > 0) {
      const pending = this.pending;
      this.pending = [];
      failed ??= (await Promise.all(pending)).find((error) => error !== undefined);
    }
    this.markedByCommits.clear();
    if (failed) throw failed;
  }

  /** Indexes a user's marked sessions (upgrading an index of the older layout first) until `budgetMs` is spent. */
  async catchUpUser(userId: string, budgetMs = SEARCH_BUDGET_MS): Promise<MarkPass> {
    const deadline = Date.now() + budgetMs;
    const upgraded = await this.upgradeIfOld(userId);
    const marks = await this.marks.ofUser(userId, MARKS_PER_SEARCH);
    const pass = await this.indexMarks(marks, deadline, { atLeastOne: true, upkeep: false });
    return { indexed: pass.indexed, left: pass.left, upgraded, more: pass.left > 0 };
  }

  /**
   * The scheduled pass: upgrades indexes of the older layout, then indexes marked sessions of
   * every user until `budgetMs` is spent, oldest marks first and users in turns (one user's
   * rebuild does not hold up another's appends). It reads at most {@link MARKS_PER_PASS} marks,
   * oldest due first (writes' before a rebuild's); a session that failed has its mark put off.
   */
  async catchUpMarked(budgetMs = INDEX_BUDGET_MS): Promise<MarkPass> {
    const deadline = Date.now() + budgetMs;
    let upgraded = 0;
    const recheck = Date.now() - this.upgradedAllAt >= LEGACY_RECHECK_MS;
    const old = this.legacy && recheck ? await this.legacy.all() : [];
    for (const legacy of old) {
      if (Date.now() >= deadline) break;
      upgraded += await this.upgrade(legacy).catch((error: Error) => {
        this.log(`pisync: search upgrade of a user failed: ${error.message}`);
        return 0;
      });
    }
    if (recheck && old.length === 0) this.upgradedAllAt = Date.now();
    // Folds left by the pass before (they did not fit its budget) or asked for by requests come first, while the budget is whole.
    const folded = await this.upkeep(deadline, true);
    const due = await this.marks.due(MARKS_PER_PASS);
    const pass = await this.indexMarks(inTurns(due.marks), deadline, { atLeastOne: folded === 0, upkeep: true });
    // Put off, a few at once: a failing session waits, and the next bounded read reaches the marks after it.
    for (let i = 0; i < pass.failed.length; i += MARKS_AT_ONCE) {
      await Promise.all(pass.failed.slice(i, i + MARKS_AT_ONCE).map((mark) => this.marks.defer(mark)));
    }
    const more = due.more || pass.left > pass.failed.length;
    return { indexed: pass.indexed, left: pass.left, upgraded, more };
  }

  /**
   * Starts users' indexes again from the bytes: each index cleared and every session marked
   * (the heads listed a page at a time); the scheduled pass, and the users' searches, index them.
   * @returns the sessions marked
   */
  async rebuildUsers(userIds: readonly string[]): Promise<number> {
    let marked = 0;
    for (const userId of userIds) {
      await this.indexOf.clear(userId);
      marked += await this.markAll(userId);
    }
    return marked;
  }

  /** Marks every stored session of the user, a page of heads at a time. */
  private async markAll(userId: string): Promise<number> {
    let marked = 0;
    let cursor: string | undefined;
    do {
      const page = await this.storesOf.meta.listHeads(userId, { limit: 100, cursor });
      await this.marks.markMany(
        userId,
        page.heads.map((head) => head.sessionId),
      );
      marked += page.heads.length;
      cursor = page.cursor;
    } while (cursor);
    return marked;
  }

  /** Upgrades the user's index if it is of the older layout (looked up once per user and instance): 1 if it did. */
  private async upgradeIfOld(userId: string): Promise<number> {
    if (!this.legacy || this.current.has(userId)) return 0;
    const old = await this.legacy.of(userId);
    if (!old) {
      this.current.add(userId);
      return 0;
    }
    return this.upgrade(old);
  }

  /** Marks the user's sessions, then replaces the old pointer (retiring its file for the sweep). */
  private async upgrade(old: LegacyIndex): Promise<number> {
    await this.markAll(old.userId);
    const retired = (await this.legacy?.retire(old)) ?? false;
    this.current.add(old.userId);
    return retired ? 1 : 0;
  }

  /** The index's folds that fit before `deadline` (see `SearchIndex.upkeep`); a failure is logged, not thrown. */
  private async upkeep(deadline: number, atLeastOne: boolean): Promise<number> {
    try {
      return (await this.indexOf.upkeep?.(deadline, { atLeastOne })) ?? 0;
    } catch (error) {
      this.log(`pisync: search upkeep failed: ${(error as Error).message}`);
      return 0;
    }
  }

  /**
   * Indexes the marked sessions, in order, in bounded steps until `deadline` (at least one step:
   * every pass makes progress); a mark goes once its session is up to date, and only that mark.
   * Each step's bytes follow the rate of the steps before it, so the last one ends near the deadline.
   */
  private async indexMarks(
    marks: readonly SessionMark[],
    deadline: number,
    options: {
      /** Whether the first step runs even past the deadline (no other work of the pass made progress). */
      atLeastOne: boolean;
      /** Whether the index's folds that fit the time left run after each step (a scheduled pass's, never a search's). */
      upkeep: boolean;
    },
  ): Promise<{ indexed: number; left: number; failed: SessionMark[] }> {
    const queue = [...marks];
    let indexed = 0;
    const failed: SessionMark[] = [];
    let bytesPerMs = FIRST_BYTES_PER_MS;
    let size = STEP_SESSIONS.first;
    let first = options.atLeastOne;
    while (queue.length > 0 && (first || Date.now() < deadline)) {
      first = false;
      const step = queue.splice(0, size);
      const maxBytes = Math.min(STEP_MAX_BYTES, Math.max(STEP_MIN_BYTES, bytesPerMs * (deadline - Date.now())));
      const t0 = performance.now();
      const { outcomes, bytes } = await this.marked.step(step, { maxBytes });
      const took = Math.max(1, performance.now() - t0);
      if (bytes > 0) bytesPerMs = bytes / took;
      const left = deadline - Date.now();
      if (took < left / 4) size = Math.min(STEP_SESSIONS.max, size * 2);
      else if (took > left / 2) size = Math.max(1, Math.floor(size / 2));
      const current = step.filter((_, i) => outcomes[i] === "current");
      for (let i = 0; i < current.length; i += MARKS_AT_ONCE) {
        await Promise.all(current.slice(i, i + MARKS_AT_ONCE).map((mark) => this.marks.done(mark)));
      }
      indexed += current.length;
      // Not taken (past the step's bytes): next, in order. More lines: after the others, as the embedded drain does.
      queue.unshift(...step.filter((_, i) => outcomes[i] === "later"));
      queue.push(...step.filter((_, i) => outcomes[i] === "more"));
      failed.push(...step.filter((_, i) => outcomes[i] === "failed"));
      if (options.upkeep && Date.now() < deadline) await this.upkeep(deadline, false);
    }
    return { indexed, left: marks.length - indexed, failed };
  }
}

/** Marks ordered oldest first within each user, users in turns (the user with the oldest mark first). */
function inTurns(marks: readonly SessionMark[]): SessionMark[] {
  const byUser = new Map<string, SessionMark[]>();
  for (const mark of [...marks].sort((a, b) => a.at - b.at)) {
    const list = byUser.get(mark.userId);
    if (list) list.push(mark);
    else byUser.set(mark.userId, [mark]);
  }
  const lists = [...byUser.values()];
  const ordered: SessionMark[] = [];
  for (let round = 0; ordered.length < marks.length; round++) {
    for (const list of lists) if (round < list.length) ordered.push(list[round] as SessionMark);
  }
  return ordered;
}

/** What {@link passesUntilDone} did. */
export interface MarkPasses {
  passes: number;
  indexed: number;
  /** Whether marks were still due when it stopped (`stopped` said so). */
  more: boolean;
}

/**
 * Bounded passes back to back until no mark is due (or `stopped()` says so): on one machine
 * nothing bounds a run, but each pass still reads a bounded number of marks and writes as
 * much as one pass of the function does.
 */
export async function passesUntilDone(
  indexer: MarkingIndexer,
  budgetMs = INDEX_BUDGET_MS,
  stopped: () => boolean = () => false,
): Promise<MarkPasses> {
  const run: MarkPasses = { passes: 0, indexed: 0, more: true };
  while (run.more && !stopped()) {
    const pass = await indexer.catchUpMarked(budgetMs);
    run.passes++;
    run.indexed += pass.indexed;
    run.more = pass.more;
  }
  return run;
}
