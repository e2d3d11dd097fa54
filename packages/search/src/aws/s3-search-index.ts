/**
 * The AWS search adapter: each user's index is a SQLite FTS5 file (the embedded adapter's schema
 * and statements, run by SQLite compiled to WebAssembly), kept in the bucket as a **base** of
 * immutable chunks plus a **log** of the changes made since, both named by a pointer item in
 * the metadata table (`pointers.ts`, `objects.ts`). Nothing runs while nobody searches or
 * writes: idle cost is the objects' storage.
 *
 * - A change brings this instance's copy of the index up to the pointer (`replica.ts`: the
 *   base's chunks fetched as SQLite reads them, the log's changes replayed), applies itself in
 *   a transaction (so `apply` answers from the index as it is now), uploads itself as one small
 *   log object and moves the pointer with a conditional write on its revision; only then is the
 *   local transaction committed. The one whose write fails was overtaken: it rolls back and
 *   starts again from the winner's pointer. Its upload is the change, whatever the index's size.
 * - When the log passes a threshold, the change that made it so asks for a fold ({@link
 *   Pointers.requestCompaction}) and a scheduled pass folds it into a new base ({@link
 *   S3SearchIndex.upkeep}), as much as fits its time budget: it uploads a patch of the pages
 *   its copy wrote since its base (now and then, the chunks the patches touch: see
 *   `Replica.compact`), and a manifest naming them with the unchanged chunks, and moves the
 *   pointer again. A request never waits for a fold, unless no pass came in time and the log is
 *   four times past the threshold. No VACUUM: it would rewrite every chunk.
 * - A read brings the copy up to the pointer the same way, then runs on it: a fresh instance
 *   fetches the chunks its query touches, not the file.
 * - What no pointer names any more is removed later by {@link S3SearchIndex.sweep}, once older
 *   than a minimum age (a reader may still hold the previous pointer).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BlobStore, NotFoundError } from "@pisync/store";
import type { AwsConnection } from "@pisync/store/aws";
import { SqliteSearchIndex } from "../embedded.js";
import type {
  FileTouched,
  IndexBatch,
  IndexState,
  LineSource,
  SearchIndex,
  SearchOptions,
  SearchPage,
} from "../port.js";
import type { SearchQuery } from "../query.js";
import { type Change, encodeChange, encodePages, logKey, userPrefix } from "./objects.js";
import { AmbiguousPointerWrite, headSeq, type Pointer, Pointers } from "./pointers.js";
import { DivergedError, fetchChanges, type PrefetchTerm, Replica } from "./replica.js";
import { type CompactionReport, Upkeep } from "./upkeep.js";
import { loadWasmSqlite, WasmSqlite } from "./wasm-sqlite.js";

/** Attempts of one change when other indexers keep moving the pointer first. */
const MAX_ATTEMPTS = 8;
/** Attempts of one read when an object its pointer named was removed meanwhile. */
const READ_ATTEMPTS = 4;
/** About the FTS5 leaves indexing `batches` writes: its text over twice a leaf (the index is about half the text). */
function leavesOf(batches: readonly IndexBatch[]): number {
  let bytes = 0;
  for (const batch of batches) for (const doc of batch.documents) bytes += doc.text.length;
  return 1 + Math.floor(bytes / 8000);
}

/**
 * The words of a query's terms as FTS5's tokenizer folds them (lower case, no diacritics), each
 * once; a prefix term's last word is a prefix.
 */
function wordsOf(query: SearchQuery): PrefetchTerm[] {
  const terms = new Map<string, PrefetchTerm>();
  for (const term of query.terms) {
    const words = term.text
      .toLowerCase()
      .normalize("NFD")
      .replace(/\p{M}/gu, "")
      .split(/[^\p{L}\p{N}]+/u)
      .filter((word) => word.length > 0);
    words.forEach((word, i) => {
      const prefix = term.kind === "prefix" && i === words.length - 1;
      terms.set(`${prefix ? "*" : ""}${word}`, { word, prefix });
    });
  }
  return [...terms.values()];
}

export type { CompactionReport } from "./upkeep.js";

/** The AWS search adapter's settings. */
export interface S3SearchIndexConfig {
  connection: AwsConnection;
  /** The metadata table (the pointer items live beside the store's items). */
  table: string;
  /** The bucket, through the store's port: index objects go under `search/`. */
  blobs: BlobStore;
  /** Reads stored lines back for snippets. */
  lines: LineSource;
  /** Where this instance's copies of indexes are kept (default: a folder of this process in the temp dir). */
  cacheDir?: string;
  /** Bytes of copies kept on local disk at most, least recently used dropped first (default 1 GiB). */
  cacheBytes?: number;
  /** Bytes per chunk of a base: a multiple of SQLite's page size (default 128 KiB). */
  chunkBytes?: number;
  /** A base of at most this many bytes is fetched whole, in parallel, when first read (default 16 MiB). */
  eagerBytes?: number;
  /**
   * Whether a fresh copy fetches its base's hot pages (the pages every query reads) with the
   * first chunk, a search first fetches at once the leaves FTS5 will read for its words, and a
   * change those its share of FTS5's merge work will read (default true). False reads them as
   * they are missed, one after another, as before: for the bench's and the tests' comparisons.
   */
  hotPages?: boolean;
  /** A log of this many entries, or of this many bytes, is due to be folded into a new base by {@link S3SearchIndex.upkeep} (default 32, 4 MiB). */
  compactAfter?: { entries: number; bytes: number };
  /** A change that takes the log past this folds it itself, on its own path (default 128, 16 MiB: no pass came in time). */
  compactOnChangeAfter?: { entries: number; bytes: number };
  /**
   * How long a pass's first fold may spend bringing a copy to the log's head, at least, past its
   * deadline (default 4 s): a copy opened cold replays each change through chunk misses (a pass
   * of 12 s at 2 GB), so one still behind then stays here, caught up so far, and the next pass
   * folds from it. The bound falls between changes: one change's replay is not cut.
   */
  foldCatchUpMs?: number;
  /** Told of each compaction. */
  onCompaction?: (report: CompactionReport) => void;
}

/** The defaults of {@link S3SearchIndexConfig}. */
export const S3_SEARCH_DEFAULTS = {
  cacheBytes: 1024 * 1024 * 1024,
  chunkBytes: 128 * 1024,
  eagerBytes: 16 * 1024 * 1024,
  compactAfter: { entries: 32, bytes: 4 * 1024 * 1024 },
  compactOnChangeAfter: { entries: 128, bytes: 16 * 1024 * 1024 },
  foldCatchUpMs: 4_000,
};

/** This instance's copy of a user's index, with the pointer it was last brought up to. */
interface HeldCopy {
  replica: Replica;
  epoch: string | undefined;
  /** The pointer the copy was brought up to (read, or published here), while the copy is still at its head. */
  pointer?: Pointer;
}

/**
 * The pointer a change may start from without reading it again: the one this copy was last
 * brought up to, while the copy is exactly at its head (same base, every entry replayed). It may
 * be stale (another writer moved it since): the conditional move of the change then fails, and
 * the change starts again from the pointer as read.
 */
function pointerOfCopy(held: HeldCopy | undefined): Pointer | undefined {
  const pointer = held?.pointer;
  if (!held || !pointer) return undefined;
  const atHead = held.replica.base?.key === pointer.base?.key && held.replica.seq === headSeq(pointer);
  return atHead && held.epoch === pointer.epoch ? pointer : undefined;
}

/** The search index of every user on S3 (bases and logs) and DynamoDB (pointers). */
export class S3SearchIndex implements SearchIndex {
  /** The pointer items (a test can make their writes fail). */
  readonly pointers: Pointers;
  /** Per user, this instance's copy (least recently used first: a Map keeps insertion order). */
  private readonly replicas = new Map<string, HeldCopy>();
  /** Per user, the end of this instance's last operation on its copy (the next one starts after it). */
  private readonly locks = new Map<string, Promise<void>>();
  /** What a user without an index reads: an empty index in memory (made on first use). */
  private empty: SqliteSearchIndex | undefined;
  private readonly dir: string;
  private made = false;
  /** Folds, their requests and sweeps (`upkeep.ts`). */
  private readonly folds: Upkeep;

  constructor(private readonly config: S3SearchIndexConfig) {
    this.pointers = new Pointers(config.connection, config.table);
    this.dir = config.cacheDir ?? join(tmpdir(), `pisync-search-${process.pid}-${randomBytes(4).toString("hex")}`);
    this.folds = new Upkeep(
      {
        blobs: config.blobs,
        pointers: this.pointers,
        compactAfter: config.compactAfter ?? S3_SEARCH_DEFAULTS.compactAfter,
        compactOnChangeAfter: config.compactOnChangeAfter ?? S3_SEARCH_DEFAULTS.compactOnChangeAfter,
        foldCatchUpMs: config.foldCatchUpMs ?? S3_SEARCH_DEFAULTS.foldCatchUpMs,
        onCompaction: (report) => config.onCompaction?.(report),
      },
      {
        exclusive: (userId, fn) => this.exclusive(userId, fn),
        replicaAt: (userId, pointer, catchUpBy) => this.replicaAt(userId, pointer, catchUpBy),
        held: (userId) => this.replicas.get(userId)?.replica,
      },
    );
  }

  /** Closes the copies and removes them from disk. */
  close(): void {
    for (const userId of [...this.replicas.keys()]) this.drop(userId);
    rmSync(this.dir, { recursive: true, force: true });
    this.empty?.close();
    this.pointers.close();
  }

  state(userId: string, sessionId: string): Promise<IndexState | undefined> {
    return this.read(userId, (index) => index.state(userId, sessionId));
  }

  /** Each session's state, in one read of the pointer (an indexing step's sessions). */
  states(userId: string, sessionIds: readonly string[]): Promise<Array<IndexState | undefined>> {
    return this.read(userId, async (index) => {
      const states: Array<IndexState | undefined> = [];
      for (const sessionId of sessionIds) states.push(await index.state(userId, sessionId));
      return states;
    });
  }

  sessions(userId: string): Promise<Array<IndexState & { sessionId: string }>> {
    return this.read(userId, (index) => index.sessions(userId));
  }

  users(): Promise<string[]> {
    return this.pointers.users();
  }

  async apply(batch: IndexBatch): Promise<boolean> {
    return (await this.applyAll([batch]))[0] as boolean;
  }

  /** One log entry per user the batches touch (in order within each user). */
  async applyAll(batches: readonly IndexBatch[]): Promise<boolean[]> {
    const results: boolean[] = new Array(batches.length);
    const byUser = new Map<string, number[]>();
    batches.forEach((batch, i) => {
      byUser.set(batch.userId, [...(byUser.get(batch.userId) ?? []), i]);
    });
    for (const [userId, positions] of byUser) {
      const mine = positions.map((i) => batches[i] as IndexBatch);
      const applied = await this.change(
        userId,
        async (index) => {
          const answers = await index.applyAll(mine);
          const logged = mine.filter((_, i) => answers[i]);
          return { result: answers, change: logged.length ? { apply: logged } : undefined };
        },
        leavesOf(mine),
      );
      positions.forEach((at, i) => {
        results[at] = applied[i] as boolean;
      });
    }
    return results;
  }

  async remove(userId: string, sessionId: string): Promise<void> {
    await this.change(userId, async (index) => {
      if ((await index.state(userId, sessionId)) === undefined) return { result: undefined };
      await index.remove(userId, sessionId);
      return { result: undefined, change: { remove: { userId, sessionId } } };
    });
  }

  /** Removes the pointer, then every object of the user's index (a reader that held the pointer reads again). */
  async clear(userId?: string): Promise<void> {
    for (const user of userId === undefined ? await this.users() : [userId]) {
      await this.exclusive(user, async () => {
        await this.pointers.delete(user);
        await this.pointers.compactionDone(user);
        this.folds.forget(user);
        this.drop(user);
        await this.config.blobs.delete(await this.config.blobs.list(userPrefix(user)));
      });
    }
  }

  files(userId: string, sessionId: string, limit: number): Promise<FileTouched[]> {
    return this.read(userId, (index) => index.files(userId, sessionId, limit));
  }

  search(userId: string, query: SearchQuery, options: SearchOptions): Promise<SearchPage> {
    return this.read(
      userId,
      (index) => index.search(userId, query, options),
      async (replica) => {
        if (replica.file.complete()) return; // nothing left to fetch: no stage to run first
        // Each stage's pages at once: the words' doclists, the rows of the entries ranked, their
        // sessions. Hints only: a stage that fails leaves the search to fetch what it misses.
        try {
          await replica.prefetch(wordsOf(query));
          const { ids, tables } = await replica.run(async () => replica.index.rankedIds(userId, query));
          await replica.prefetchRows(tables, ids);
          const keys = await replica.run(async () => replica.index.sessionKeysOf(ids));
          await replica.prefetchRows(["sessions"], keys);
        } catch {}
      },
    );
  }

  /**
   * Removes the user's objects no pointer names, once older than `minAgeMs`, and forgets retired
   * objects past that age. For a scheduled pass, never a request: it lists the user's objects.
   */
  sweep(userId: string, minAgeMs?: number): Promise<{ removed: number }> {
    return this.folds.sweep(userId, minAgeMs);
  }

  /** Bytes this instance holds of a user's index on local disk (0 when it holds no copy). */
  localBytes(userId: string): number {
    return this.replicas.get(userId)?.replica.localBytes() ?? 0;
  }

  /** Runs `fn` on the user's index as the pointer names it now (an empty index when there is none). */
  private async read<T>(
    userId: string,
    fn: (index: SqliteSearchIndex) => Promise<T>,
    /** Fetches at once, before `fn` runs, pages `fn` will read (a hint: `fn` still fetches what it misses). */
    prefetch?: (replica: Replica) => Promise<void>,
  ): Promise<T> {
    await loadWasmSqlite();
    return this.exclusive(userId, async () => {
      for (let attempt = 1; ; attempt++) {
        const pointer = await this.pointers.get(userId);
        if (!pointer) {
          this.drop(userId);
          this.empty ??= new SqliteSearchIndex(new WasmSqlite(":memory:"), this.config.lines);
          return fn(this.empty);
        }
        try {
          const replica = await this.replicaAt(userId, pointer);
          if (this.config.hotPages !== false && prefetch) await prefetch(replica);
          return await replica.run(() => fn(replica.index));
        } catch (error) {
          // An object removed since the pointer was read (a clear, a sweep), or a copy gone astray: start again.
          if (!this.restartable(userId, error) || attempt >= READ_ATTEMPTS) throw error;
        }
      }
    });
  }

  /**
   * Applies `fn` to the user's index as the pointer names it, in a transaction held open until
   * the change it reports is published (see the module's comment); nothing is written when it
   * reports none.
   */
  private async change<T>(
    userId: string,
    fn: (index: SqliteSearchIndex) => Promise<{ result: T; change?: Change }>,
    /** About the FTS5 leaves the change writes (its merge work is fetched first when due). */
    leaves = 1,
  ): Promise<T> {
    await loadWasmSqlite();
    return this.exclusive(userId, async () => {
      for (let attempt = 1; ; attempt++) {
        // A change's first attempt starts from the pointer its copy is at (an indexing step read
        // it a moment ago): one round trip less; a stale one fails the conditional move below.
        const pointer =
          (attempt === 1 && pointerOfCopy(this.replicas.get(userId))) || (await this.pointers.get(userId));
        let replica: Replica;
        let outcome: { result: T; change?: Change };
        try {
          replica = await this.replicaAt(userId, pointer);
          const copy = replica;
          if (this.config.hotPages !== false) await copy.prefetchMerge(leaves);
          // The pages this change reads go in its log entry: a copy replaying it fetches them at once.
          const reads = new Set<number>();
          // SQLite's cache would hide what it read before; a replay on a copy opened cold reads them too.
          copy.driver.pragma("shrink_memory");
          copy.file.recording = reads;
          try {
            outcome = await copy.run(async () => {
              copy.driver.begin();
              try {
                return await fn(copy.index);
              } catch (error) {
                copy.driver.rollbackAll();
                throw error;
              }
            });
          } finally {
            copy.file.recording = undefined;
          }
          if (outcome.change) outcome.change.reads = encodePages([...reads].sort((a, b) => a - b).map((b) => b + 1));
        } catch (error) {
          if (!this.restartable(userId, error) || attempt >= READ_ATTEMPTS) throw error;
          continue;
        }
        if (!outcome.change) {
          replica.driver.rollbackAll();
          return outcome.result;
        }
        let published: Pointer | undefined;
        try {
          published = await this.publish(userId, pointer, replica, outcome.change);
        } finally {
          if (!published) replica.driver.rollbackAll();
        }
        if (published) {
          try {
            replica.driver.commit();
            replica.seq += 1;
            const held = this.replicas.get(userId);
            if (held) {
              held.epoch = published.epoch;
              held.pointer = published;
            }
            await this.folds.afterChange(userId, published, replica);
          } catch {
            // Published, so in the log: a copy opened again replays it.
            this.drop(userId);
          }
          return outcome.result;
        }
        if (attempt >= MAX_ATTEMPTS) throw new Error(`the search index of ${userId} kept changing: gave up`);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * attempt));
      }
    });
  }

  /**
   * Uploads the change as the log's next entry and moves the pointer to name it: the new
   * pointer, or undefined when another writer moved it first. A write whose answer was lost is
   * resolved by reading the pointer: it names the entry exactly when the write applied.
   */
  private async publish(
    userId: string,
    pointer: Pointer | undefined,
    replica: Replica,
    change: Change,
  ): Promise<Pointer | undefined> {
    const seq = replica.seq + 1;
    const key = logKey(userId, seq);
    const body = encodeChange(change);
    await this.config.blobs.put(key, body);
    const next: Pointer = {
      rev: (pointer?.rev ?? 0) + 1,
      epoch: pointer?.epoch ?? randomBytes(8).toString("hex"),
      base: pointer?.base,
      log: [...(pointer?.log ?? []), { seq, key, bytes: body.length }],
      retired: pointer?.retired ?? [],
    };
    try {
      return (await this.pointers.move(userId, pointer, next)) ? next : undefined;
    } catch (error) {
      if (!(error instanceof AmbiguousPointerWrite)) throw error;
      const now = await this.pointers.get(userId);
      return now?.epoch === next.epoch && now.log.some((entry) => entry.key === key) ? now : undefined;
    }
  }

  /**
   * Folds the logs due for it, each while its estimate fits before `deadline` (see {@link Upkeep.pass}).
   * @returns the logs folded
   */
  upkeep(deadline: number, options: { atLeastOne?: boolean } = {}): Promise<number> {
    return this.folds.pass(deadline, options);
  }

  /**
   * Folds the log into a new base now, for a scheduled pass (see {@link Upkeep.compact}).
   * Undefined when there was nothing to fold. @throws when the pointer moved meanwhile
   */
  compact(userId: string, options: { vacuum?: boolean } = {}): Promise<CompactionReport | undefined> {
    return this.folds.compact(userId, options);
  }

  /** This instance's copy of the user's index, brought up to `pointer` (a new empty one when undefined). */
  private async replicaAt(userId: string, pointer: Pointer | undefined, catchUpBy?: number): Promise<Replica> {
    let held = this.replicas.get(userId);
    if (
      held?.replica.base &&
      pointer?.base &&
      held.epoch === pointer.epoch &&
      held.replica.base.key !== pointer.base.key &&
      !(await this.moved(held.replica, pointer.base))
    ) {
      this.drop(userId);
      held = undefined;
    }
    if (
      held &&
      (held.epoch !== pointer?.epoch ||
        held.replica.base?.key !== pointer?.base?.key ||
        held.replica.seq > (pointer ? headSeq(pointer) : 0))
    ) {
      this.drop(userId);
      held = undefined;
    }
    // The log's objects are fetched while the copy opens, not one after another once it has.
    const log = pointer?.log ?? [];
    const changes = fetchChanges(this.config.blobs, log, held ? held.replica.seq : (pointer?.base?.seq ?? 0));
    if (!held) {
      const replica = await Replica.open(this.config.blobs, this.config.lines, this.scratch(), pointer?.base, {
        chunkBytes: this.config.chunkBytes ?? S3_SEARCH_DEFAULTS.chunkBytes,
        eagerBytes: this.config.eagerBytes ?? S3_SEARCH_DEFAULTS.eagerBytes,
        hot: this.config.hotPages,
      });
      held = { replica, epoch: pointer?.epoch };
    }
    this.replicas.delete(userId);
    this.replicas.set(userId, held);
    try {
      await held.replica.replay(log, changes, catchUpBy);
      held.pointer = pointer;
    } finally {
      this.evict(userId);
    }
    return held.replica;
  }

  /** Moves a copy to the pointer's newer base (see {@link Replica.moveTo}): false when it could not. */
  private async moved(replica: Replica, base: { key: string; seq: number }): Promise<boolean> {
    try {
      return await replica.moveTo(base, this.config.lines, {
        eagerBytes: this.config.eagerBytes ?? S3_SEARCH_DEFAULTS.eagerBytes,
        hot: this.config.hotPages,
      });
    } catch {
      return false; // the copy is then opened again, as before
    }
  }

  /** Whether an operation can start again after `error` (its copy dropped): an object gone, a copy astray. */
  private restartable(userId: string, error: unknown): boolean {
    if (!(error instanceof NotFoundError) && !(error instanceof DivergedError)) return false;
    this.drop(userId);
    return true;
  }

  /** Runs operations on one user's copy one at a time (other users' run meanwhile). */
  private exclusive<T>(userId: string, fn: () => Promise<T>): Promise<T> {
    const result = (this.locks.get(userId) ?? Promise.resolve()).then(fn);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(userId, settled);
    void settled.then(() => {
      if (this.locks.get(userId) === settled) this.locks.delete(userId);
    });
    return result;
  }

  /** A fresh path for a copy (the folder is made, emptied, on first use). */
  private scratch(): string {
    if (!this.made) {
      rmSync(this.dir, { recursive: true, force: true });
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.made = true;
    }
    return join(this.dir, `${randomBytes(8).toString("hex")}.sqlite`);
  }

  private drop(userId: string): void {
    const held = this.replicas.get(userId);
    if (!held) return;
    this.replicas.delete(userId);
    held.replica.close();
  }

  /** Drops the least recently used copies of idle users until the copies fit the budget (never `keep`'s). */
  private evict(keep: string): void {
    const budget = this.config.cacheBytes ?? S3_SEARCH_DEFAULTS.cacheBytes;
    let total = 0;
    for (const held of this.replicas.values()) total += held.replica.localBytes();
    for (const [userId, held] of [...this.replicas]) {
      if (total <= budget) return;
      if (userId === keep || this.locks.has(userId)) continue;
      total -= held.replica.localBytes();
      this.drop(userId);
    }
  }
}
