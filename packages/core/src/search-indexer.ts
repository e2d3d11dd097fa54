/**
 * Keeps the search index following the stored bytes. The index is derived data: each session's
 * indexed generation and offset say how far it got, so after a crash between an append and its
 * index update a catch-up pass reads the missing lines from the store; a new generation is
 * indexed again from its start; a deleted session's documents go.
 */
import {
  batchOf,
  type IndexBatch,
  type IndexState,
  type LineSource,
  type LinesToIndex,
  type SearchIndex,
} from "@pisync/search";
import type { SessionHead, Stores } from "@pisync/store";
import { readRange, withFreshHead } from "./segments.js";

/** Bytes read per batch: bounds the memory one catch-up step takes. */
const BATCH_BYTES = 4 * 1024 * 1024;

/** How long a write waits before the drain starts: appends that come close together share a transaction. */
export const DRAIN_DELAY_MS = 200;
/** Sessions one drain step indexes in one transaction at most. */
const DRAIN_SESSIONS = 64;
/**
 * Bytes one drain step reads at most (a session's batch may pass it): bounds its memory, and
 * keeps transactions large, since each commit writes a new FTS5 segment that later merges cost.
 */
const DRAIN_BYTES = 8 * 1024 * 1024;

/** What one bounded step did with a session (see {@link SearchIndexer.step}). */
export type StepOutcome =
  /** Up to date with the head the step read (or gone from the store, and now from the index). */
  | "current"
  /** Lines added; more are left for a later step. */
  | "more"
  /** Not taken (past the step's limits) or overtaken by another indexer: a later step goes on. */
  | "later"
  /** Failed now, or waiting for its retry time (see {@link SearchIndexer.failures}). */
  | "failed";

/** Sessions whose heads or lines a step reads at once. */
const STEP_READS_AT_ONCE = 8;

/** `fn` over `items`, a few at once, each answer its value or its error. */
async function settleEach<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<Array<R | Error>> {
  const answers: Array<R | Error> = [];
  for (let i = 0; i < items.length; i += STEP_READS_AT_ONCE) {
    const group = items.slice(i, i + STEP_READS_AT_ONCE);
    answers.push(...(await Promise.all(group.map((item) => fn(item).catch((error: Error) => error)))));
  }
  return answers;
}

/** Where the users the catch-up pass visits come from (every user the meta store has). */
export type UserSource = () => Promise<readonly string[]>;

/** The wait before a failed session is tried again: doubled at each failure, up to an hour. */
const RETRY_FIRST_MS = 10_000;
const RETRY_MAX_MS = 3_600_000;

/** A session whose indexing failed, and when it is tried again. */
export interface IndexFailure {
  userId: string;
  sessionId: string;
  /** Failures in a row. */
  attempts: number;
  /** Epoch milliseconds before which it is not tried again. */
  retryAt: number;
  /** What the last failure said. */
  error: string;
}

/** A result of applying one session's lines: added, overtaken (read it again), or failed (recorded). */
type Applied = boolean | "failed";

/**
 * Keeps a search index following the stored sessions: writes mark a session dirty and a
 * background drain indexes it; `catchUp` repairs what a crash left out from the stored bytes;
 * `rebuild` starts over from them. The index is derived data: nothing here changes stored bytes.
 */
export class SearchIndexer {
  /** Sessions written since they were last indexed, as `userId\nsessionId` (ids hold no newline). */
  private readonly dirty = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private draining: Promise<void> | undefined;
  /** Set during a rebuild: lines are read into batches here, while the index writes the last step. */
  private parseHere = false;
  /** Sessions whose indexing failed, by key: left alone until their retry time (see {@link failures}). */
  private readonly failed = new Map<string, IndexFailure>();

  /**
   * @param users every user to visit in a catch-up pass (besides those the index knows); the
   *   embedded store lists its users; without it, only the index's users and those passed in.
   * @param log where a failed session is reported (once per doubling of its retry wait).
   * @param now the clock of retry times.
   */
  constructor(
    private readonly stores: Stores,
    private readonly index: SearchIndex,
    private readonly options: {
      users?: UserSource;
      log?: (line: string) => void;
      drainDelayMs?: number;
      now?: () => number;
    } = {},
  ) {}

  /**
   * Sessions whose indexing failed (any cause: a line the index cannot take, a read that
   * failed): each is recorded, tried again after a wait that doubles at each failure (10 s up
   * to an hour), and never holds up another session of its batch or another user.
   */
  failures(): IndexFailure[] {
    return [...this.failed.values()];
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Whether a session failed and its retry time has not come yet. */
  private waiting(key: string): boolean {
    const failure = this.failed.get(key);
    return failure !== undefined && failure.retryAt > this.now();
  }

  /** Records a session's failure; reported at its first failure and then each time the count doubles. */
  private fail(key: string, error: unknown): void {
    const [userId, sessionId] = key.split("\n") as [string, string];
    const attempts = (this.failed.get(key)?.attempts ?? 0) + 1;
    const wait = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (attempts - 1));
    const message = error instanceof Error ? error.message : String(error);
    this.failed.set(key, { userId, sessionId, attempts, retryAt: this.now() + wait, error: message });
    if ((attempts & (attempts - 1)) === 0) {
      this.report(
        `pisync: indexing session ${sessionId} failed (${attempts} time${attempts > 1 ? "s" : ""}): ${message}; tried again in ${Math.round(wait / 1000)} s`,
      );
    }
  }

  /**
   * Notes that a session was written: a background drain indexes it shortly (within about
   * {@link DRAIN_DELAY_MS} plus the drain's own time), batched with other written sessions.
   * Never throws; a crash before the drain is covered by the catch-up pass.
   */
  markDirty(userId: string, sessionId: string): void {
    const key = `${userId}\n${sessionId}`;
    if (this.waiting(key)) return; // a failed session: the catch-up pass tries it again in time
    this.dirty.add(key);
    this.schedule();
  }

  /** Resolves once every session marked dirty so far is indexed (or its drain failed). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.draining || this.dirty.size > 0) await (this.draining ?? this.startDrain());
  }

  /** Stops the drain timer (what is still dirty is left to the next start's catch-up pass). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private report(line: string): void {
    (this.options.log ?? console.error)(line);
  }

  private schedule(): void {
    if (this.timer || this.draining) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.startDrain();
    }, this.options.drainDelayMs ?? DRAIN_DELAY_MS);
    this.timer.unref?.();
  }

  /** At most one drain at a time: a second call joins the running one. */
  private startDrain(): Promise<void> {
    this.draining ??= this.drain()
      .catch((error: Error) => this.report(`pisync: indexing failed: ${error.message}`))
      .finally(() => {
        this.draining = undefined;
        if (this.dirty.size > 0) this.schedule();
      });
    return this.draining;
  }

  /**
   * Indexes the dirty sessions, up to {@link DRAIN_SESSIONS} or {@link DRAIN_BYTES} per
   * transaction. One step is applied while the next is read (and, in a rebuild, read into
   * batches here): with an index that writes on its own thread, both threads work.
   */
  private async drain(): Promise<void> {
    const inFlight = new Set<string>();
    let applying: Promise<void> | undefined;
    while (this.dirty.size > 0 || applying) {
      const step = await this.readStep(inFlight);
      if (step.items.length === 0 && step.again.length === 0) {
        // Nothing to read but what is being applied: wait for it.
        await applying;
        applying = undefined;
        continue;
      }
      const parsed = this.parseHere ? this.parse(step.items) : undefined;
      await applying;
      const keys = step.items.map((item) => `${item.at.userId}\n${item.at.sessionId}`);
      for (const key of keys) inFlight.add(key);
      applying = this.applyEach(step.items, parsed)
        .then((applied) => {
          applied.forEach((ok, i) => {
            if (ok === true) this.failed.delete(keys[i]);
            else if (ok === false) this.dirty.add(keys[i]); // another indexer overtook it: read its state again
          });
          for (const key of step.again) if (!this.failed.has(key)) this.dirty.add(key);
        })
        .finally(() => {
          for (const key of keys) inFlight.delete(key);
        });
      // Its failure is thrown where it is awaited (the next step), not reported as unhandled meanwhile.
      applying.catch(() => {});
    }
  }

  /**
   * Reads the next step's lines from the dirty sessions (those being applied wait for the next
   * one). Sessions with more to read go back to the dirty set once this step is applied.
   */
  private async readStep(inFlight: ReadonlySet<string>): Promise<{ items: LinesToIndex[]; again: string[] }> {
    const items: LinesToIndex[] = [];
    const again: string[] = [];
    let bytes = 0;
    for (const key of [...this.dirty]) {
      if (items.length >= DRAIN_SESSIONS || bytes >= DRAIN_BYTES) break;
      if (inFlight.has(key)) continue;
      this.dirty.delete(key);
      if (this.waiting(key)) continue;
      const [userId, sessionId] = key.split("\n");
      try {
        const next = await this.unindexed(userId, sessionId);
        if (next === "gone") await this.index.remove(userId, sessionId);
        else if (next) {
          items.push(next.lines);
          bytes += next.lines.bytes.length;
          if (next.more) again.push(key);
        }
      } catch (error) {
        // One session's failure does not hold up the others: the catch-up pass retries it in time.
        this.fail(key, error);
      }
    }
    return { items, again };
  }

  /** Reads a rebuild step's lines into batches here; a session whose lines cannot be read is recorded as failed. */
  private parse(items: readonly LinesToIndex[]): Array<IndexBatch | undefined> {
    return items.map((item) => {
      try {
        return batchOf(item.bytes, item.at);
      } catch (error) {
        this.fail(`${item.at.userId}\n${item.at.sessionId}`, error);
        return undefined;
      }
    });
  }

  /**
   * Adds a step's sessions in one transaction; when it fails, each session alone (one
   * session's failure fails its whole transaction): those that fail alone are recorded.
   */
  private async applyEach(items: readonly LinesToIndex[], parsed?: Array<IndexBatch | undefined>): Promise<Applied[]> {
    const results: Applied[] = items.map(() => "failed");
    const at = items.flatMap((_, i) => (parsed && parsed[i] === undefined ? [] : [i]));
    if (at.length === 0) return results;
    const run = (positions: number[]) =>
      parsed
        ? this.index.applyAll(positions.map((i) => parsed[i] as IndexBatch))
        : this.applyLines(positions.map((i) => items[i]));
    try {
      const applied = await run(at);
      at.forEach((i, k) => {
        results[i] = applied[k] as boolean;
      });
    } catch (error) {
      if (at.length === 1) this.fail(`${items[at[0]].at.userId}\n${items[at[0]].at.sessionId}`, error);
      else for (const i of at) results[i] = (await this.applyEach([items[i]], parsed && [parsed[i]]))[0];
    }
    return results;
  }

  /**
   * Reads lines into batches and adds them: where the index reads them (the embedded index does
   * on its writer thread), else here.
   */
  private applyLines(items: readonly LinesToIndex[]): Promise<boolean[]> {
    if (items.length === 0) return Promise.resolve([]);
    if (this.index.applyLines) return this.index.applyLines(items);
    return this.index.applyAll(items.map((item) => batchOf(item.bytes, item.at)));
  }

  /**
   * The next run of a session's unindexed lines (from its indexed offset, or from 0 for a new
   * generation); "gone" when the store has no such session; undefined when it is up to date.
   */
  private async unindexed(
    userId: string,
    sessionId: string,
  ): Promise<{ lines: LinesToIndex; more: boolean } | "gone" | undefined> {
    // Both at once: on S3 + DynamoDB each is a round trip of its own.
    const [head, state] = await Promise.all([
      this.stores.meta.getHead(userId, sessionId),
      this.index.state(userId, sessionId),
    ]);
    if (!head) return "gone";
    const { generation, length } = head.current;
    if (state?.generation === generation && state.offset === length) return undefined;
    const from = resumeAt(head, state);
    const bytes = await nextLines(this.stores, head, from);
    return { lines: { bytes, at: { userId, sessionId, generation, from } }, more: from + bytes.length < length };
  }

  /**
   * One bounded step over the given sessions: the next run of each one's unindexed lines (one
   * batch's worth, {@link BATCH_BYTES}, at most) added in one transaction, up to
   * {@link DRAIN_SESSIONS} sessions and `maxBytes` of lines (the first session always);
   * sessions past them, or with more lines, are left to the caller's next step. Heads, index
   * states and lines are read a few sessions at once. A caller with a time budget (a Lambda
   * invocation) calls it until it is spent.
   * @returns what became of each session, and the bytes of lines added
   */
  async step(
    sessions: ReadonlyArray<{ userId: string; sessionId: string }>,
    options: { maxBytes?: number } = {},
  ): Promise<{ outcomes: StepOutcome[]; bytes: number }> {
    const maxBytes = options.maxBytes ?? DRAIN_BYTES;
    const keys = sessions.map((s) => `${s.userId}\n${s.sessionId}`);
    const outcomes: StepOutcome[] = sessions.map(() => "later");
    const heads = await settleEach(sessions, (s) => this.stores.meta.getHead(s.userId, s.sessionId));
    const states = await this.statesOf(sessions);
    const chosen: Array<{ i: number; head: SessionHead; from: number }> = [];
    let planned = 0;
    for (const [i, { userId, sessionId }] of sessions.entries()) {
      const key = keys[i] as string;
      const head = heads[i];
      if (this.waiting(key)) outcomes[i] = "failed";
      else if (head instanceof Error || states[i] instanceof Error) {
        this.fail(key, head instanceof Error ? head : states[i]);
        outcomes[i] = "failed";
      } else if (!head) {
        try {
          await this.index.remove(userId, sessionId);
          outcomes[i] = "current";
        } catch (error) {
          this.fail(key, error);
          outcomes[i] = "failed";
        }
      } else {
        const state = states[i] as IndexState | undefined;
        const { generation, length } = head.current;
        if (state?.generation === generation && state.offset === length) {
          outcomes[i] = "current";
          continue;
        }
        const from = resumeAt(head, state);
        const pending = isV1(head) ? length : Math.min(length - from, BATCH_BYTES);
        // Past the step's bytes, no later session is taken either: sessions are indexed in the
        // order given, as the embedded drain does, and that order (the rowids) decides which
        // matches a broad query ranks (its newest).
        if (chosen.length > 0 && (chosen.length >= DRAIN_SESSIONS || planned + pending > maxBytes)) break;
        chosen.push({ i, head, from });
        planned += pending;
      }
    }
    const read = await settleEach(chosen, ({ head, from }) => nextLines(this.stores, head, from));
    const items: LinesToIndex[] = [];
    const taken: Array<{ i: number; end: number; length: number }> = [];
    for (const [k, { i, head, from }] of chosen.entries()) {
      const bytes = read[k];
      if (bytes instanceof Error || bytes === undefined) {
        this.fail(keys[i] as string, bytes);
        outcomes[i] = "failed";
        continue;
      }
      const { userId, sessionId } = sessions[i] as { userId: string; sessionId: string };
      items.push({ bytes, at: { userId, sessionId, generation: head.current.generation, from } });
      taken.push({ i, end: from + bytes.length, length: head.current.length });
    }
    const applied = await this.applyEach(items);
    let bytes = 0;
    applied.forEach((ok, k) => {
      const { i, end, length } = taken[k] as { i: number; end: number; length: number };
      if (ok === true) {
        this.failed.delete(keys[i] as string);
        bytes += (items[k] as LinesToIndex).bytes.length;
        outcomes[i] = end < length ? "more" : "current";
      } else outcomes[i] = ok === false ? "later" : "failed"; // false: another indexer overtook it
    });
    return { outcomes, bytes };
  }

  /** The index states of sessions, in one read per user where the index can. Errors in place of a user's states when its read failed. */
  private async statesOf(
    sessions: ReadonlyArray<{ userId: string; sessionId: string }>,
  ): Promise<Array<IndexState | undefined | Error>> {
    const states: Array<IndexState | undefined | Error> = sessions.map(() => undefined);
    const byUser = new Map<string, number[]>();
    sessions.forEach((s, i) => {
      byUser.set(s.userId, [...(byUser.get(s.userId) ?? []), i]);
    });
    for (const [userId, positions] of byUser) {
      const ids = positions.map((i) => (sessions[i] as { sessionId: string }).sessionId);
      try {
        const read = this.index.states
          ? await this.index.states(userId, ids)
          : await Promise.all(ids.map((id) => this.index.state(userId, id)));
        positions.forEach((at, k) => {
          states[at] = read[k];
        });
      } catch (error) {
        for (const at of positions) states[at] = error as Error;
      }
    }
    return states;
  }

  /** Brings one session's index up to its stored bytes (or removes it when the session is gone). */
  async sync(userId: string, sessionId: string): Promise<void> {
    const head = await this.stores.meta.getHead(userId, sessionId);
    if (!head) return this.index.remove(userId, sessionId);
    const { generation, length } = head.current;
    let state = await this.index.state(userId, sessionId);
    let from = resumeAt(head, state);
    while (from < length) {
      const bytes = await nextLines(this.stores, head, from);
      const [applied] = await this.applyLines([{ bytes, at: { userId, sessionId, generation, from } }]);
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
   * knows) brought up to date, and sessions the store no longer has removed. Stale sessions go
   * through the drain (many per transaction); one that fails is reported and left to the next pass.
   */
  async catchUp(userIds?: readonly string[]): Promise<void> {
    const users = new Set([
      ...(userIds ?? []),
      ...((await this.options.users?.()) ?? []),
      ...(await this.index.users()),
    ]);
    for (const userId of users) {
      const seen = new Set<string>();
      let cursor: string | undefined;
      do {
        const page = await this.stores.meta.listHeads(userId, { limit: 100, cursor });
        for (const head of page.heads) {
          seen.add(head.sessionId);
          const state = await this.index.state(userId, head.sessionId);
          const key = `${userId}\n${head.sessionId}`;
          const stale = state?.generation !== head.current.generation || state.offset !== head.current.length;
          if (stale && !this.waiting(key)) this.dirty.add(key);
        }
        // A few pages at a time: the drain's steps fill up and the dirty set stays small.
        if (this.dirty.size >= 4 * DRAIN_SESSIONS || !page.cursor) await this.flush();
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
    this.parseHere = true;
    try {
      await this.catchUp(userIds);
    } finally {
      this.parseHere = false;
    }
  }
}

/**
 * Where indexing a session resumes: its indexed offset in the same generation, else 0. A v1
 * file (no ids: pi numbers its entries by line) is always indexed whole, since lines read from
 * an offset would be numbered from there.
 */
function resumeAt(head: SessionHead, state: IndexState | undefined): number {
  const { generation, length } = head.current;
  return !isV1(head) && state?.generation === generation && state.offset <= length ? state.offset : 0;
}

function isV1(head: SessionHead): boolean {
  return head.summary.hasHeader && (head.summary.headerVersion ?? 1) < 2;
}

/** The next run of whole lines to index from `from`: one batch's worth, or a v1 file whole (see {@link resumeAt}). */
function nextLines(stores: Stores, head: SessionHead, from: number): Promise<Uint8Array> {
  const { segments, length } = head.current;
  return wholeLines(stores, segments, from, length, isV1(head) ? length : BATCH_BYTES);
}

/**
 * Bytes [from, ≤ from + maxBytes) of a generation, cut after the last newline so that only
 * whole lines are indexed (a line longer than a batch is read whole).
 */
async function wholeLines(
  stores: Stores,
  segments: SessionHead["current"]["segments"],
  from: number,
  length: number,
  maxBytes: number,
) {
  const bytes = await readRange(stores.blobs, segments, from, Math.min(length, from + maxBytes));
  const cut = bytes.lastIndexOf(0x0a);
  if (cut === bytes.length - 1) return bytes;
  return cut >= 0 ? bytes.subarray(0, cut + 1) : readRange(stores.blobs, segments, from, length);
}

/** Reads lines of a session's current generation from the store (for snippets); none once the generation moved on. */
export function storedLines(stores: Stores): LineSource {
  return (userId, sessionId, generation, ranges) =>
    withFreshHead(
      () => stores.meta.getHead(userId, sessionId),
      async (head) => {
        if (!head || head.current.generation !== generation) return ranges.map(() => undefined);
        const { segments, length } = head.current;
        return Promise.all(
          ranges.map((r) =>
            r.offset + r.length <= length
              ? readRange(stores.blobs, segments, r.offset, r.offset + r.length)
              : undefined,
          ),
        );
      },
    );
}
