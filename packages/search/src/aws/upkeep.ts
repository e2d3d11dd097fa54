/**
 * The upkeep of the AWS search's indexes, off the request path: a change's log past the
 * threshold asks for a fold ({@link Upkeep.afterChange}); a scheduled pass folds the logs due,
 * each while its estimate fits the pass's budget ({@link Upkeep.pass}); a fold uploads the new
 * base its copy makes (`compactor.ts`) and moves the pointer to it; a sweep removes what no
 * pointer names. The index (`s3-search-index.ts`) lends it its copies and their lock.
 */
import type { BlobStore } from "@pisync/store";
import { AmbiguousPointerWrite, headSeq, type Pointer, type Pointers } from "./pointers.js";
import type { Replica } from "./replica.js";
import { sweepUser } from "./sweep.js";
import { loadWasmSqlite, type WasmSqlite } from "./wasm-sqlite.js";

/** How long the pointer names a retired object (the sweep's default minimum age): readers' requests take seconds. */
const RETIRED_KEPT_MS = 15 * 60_000;
/** Retired objects the pointer names at most (its item must stay far below DynamoDB's 400 KB). */
const MAX_RETIRED = 1500;
/** A file whose free pages are more than this share of it is rewritten by a compaction asked to vacuum. */
const VACUUM_FREE_SHARE = 0.25;
/** Compaction requests a pass reads at most. */
const REQUESTS_PER_PASS = 32;
/** How long a fold that failed waits before a pass tries it again. */
const FOLD_RETRY_MS = 10 * 60_000;
/** The upload rate a fold's estimate assumes before one was measured here (bytes per ms: a slow link's). */
const FIRST_UPLOAD_BYTES_PER_MS = 4_000;

/** What a compaction did (for the bench and the logs). */
export interface CompactionReport {
  userId: string;
  ms: number;
  /** Bytes of chunks, patches, hot pages and manifest uploaded. */
  uploaded: number;
  /** A patch of the pages written since the base, a merge of the patches past their bounds, or chunks only (a first base). */
  kind?: "patch" | "merge" | "chunks";
  /** Whether the pointer now names the new base (false: another writer moved it first). */
  published: boolean;
}

/** The thresholds and hooks of the upkeep (the index's configuration, its defaults applied). */
export interface UpkeepOptions {
  blobs: BlobStore;
  pointers: Pointers;
  /** A log past this is due for a fold by a pass. */
  compactAfter: { entries: number; bytes: number };
  /** A change that takes the log past this folds it itself. */
  compactOnChangeAfter: { entries: number; bytes: number };
  /** How long a pass's first fold may spend bringing a copy to the log's head, past its deadline. */
  foldCatchUpMs: number;
  onCompaction?: (report: CompactionReport) => void;
}

/** What the upkeep borrows of the index: its copies, and the lock that keeps one operation per user's copy. */
export interface UpkeepHost {
  /** Runs `fn` alone on the user's copy. */
  exclusive<T>(userId: string, fn: () => Promise<T>): Promise<T>;
  /** The user's copy brought up to `pointer` (replaying no change begun after `catchUpBy`). */
  replicaAt(userId: string, pointer: Pointer | undefined, catchUpBy?: number): Promise<Replica>;
  /** The user's copy held here, if any (not brought up to anything). */
  held(userId: string): Replica | undefined;
}

/** Whether the pointer's log is past `limit`. */
function logPast(pointer: Pointer, limit: { entries: number; bytes: number }): boolean {
  const bytes = pointer.log.reduce((n, entry) => n + entry.bytes, 0);
  return pointer.log.length >= limit.entries || bytes >= limit.bytes;
}

/** The share of a file's pages that are free. */
function freeShare(driver: WasmSqlite): number {
  const [free] = driver.pragma("freelist_count") as Array<{ freelist_count: number }>;
  const [pages] = driver.pragma("page_count") as Array<{ page_count: number }>;
  return free && pages?.page_count ? free.freelist_count / pages.page_count : 0;
}

/** The folds and sweeps of every user's index on this instance. */
export class Upkeep {
  /** Users whose log this instance saw past the threshold, not folded since (a pass folds them first). */
  private readonly due = new Set<string>();
  /** Per user, the history and base (`epoch/key`) whose log this instance asked a fold of (asked once per base). */
  private readonly requested = new Map<string, string>();
  /** Bytes a fold uploads per ms, as the last folds here went (the estimate of the next one). */
  private uploadRate = FIRST_UPLOAD_BYTES_PER_MS;

  constructor(
    private readonly options: UpkeepOptions,
    private readonly host: UpkeepHost,
  ) {}

  /** Forgets what this instance knew of a user's folds (its index was cleared). */
  forget(userId: string): void {
    this.due.delete(userId);
    this.requested.delete(userId);
  }

  /**
   * After a published change: a log past the threshold is due for a fold (asked of the scheduled
   * passes once per base; best effort: a lost request leaves the fold to the next change past
   * it), or folded now when far past it and this copy is at its head.
   */
  async afterChange(userId: string, pointer: Pointer, replica: Replica): Promise<void> {
    if (!logPast(pointer, this.options.compactAfter)) return;
    const overdue = this.options.compactOnChangeAfter;
    if (logPast(pointer, overdue) && headSeq(pointer) === replica.seq) {
      await this.fold(userId, pointer, replica).catch(() => {
        // Best effort: the change is published already; a later change folds the log (its objects wait for the sweep).
      });
      return;
    }
    this.due.add(userId);
    const base = `${pointer.epoch}/${pointer.base?.key ?? ""}`;
    if (this.requested.get(userId) === base) return;
    try {
      await this.options.pointers.requestCompaction(userId);
      this.requested.set(userId, base);
    } catch {}
  }

  /**
   * Folds the logs due for it (those this instance saw past the threshold, then those other
   * instances asked for, oldest first), each while its estimate fits before `deadline`; with
   * `atLeastOne`, the first one whatever its estimate (a pass's first work, with its whole
   * budget ahead: a fold cannot be split). A fold that fails is left for a later pass (and told
   * to `onCompaction`). @returns the logs folded
   */
  async pass(deadline: number, options: { atLeastOne?: boolean } = {}): Promise<number> {
    await loadWasmSqlite();
    const users = new Set(this.due);
    let forced = options.atLeastOne === true;
    if (forced || Date.now() < deadline) {
      for (const userId of await this.options.pointers.compactionsDue(REQUESTS_PER_PASS)) users.add(userId);
    }
    let folded = 0;
    for (const userId of users) {
      if (!forced && Date.now() + this.foldEstimateMs(userId) > deadline) continue;
      const catchUpBy = forced ? Math.max(deadline, Date.now() + this.options.foldCatchUpMs) : deadline;
      const report = await this.host
        .exclusive(userId, () => this.foldIfDue(userId, catchUpBy))
        .catch(async () => {
          // Tried again later, not first at every pass: the requests behind it come first meanwhile.
          this.due.delete(userId);
          await this.options.pointers
            .requestCompaction(userId, Date.now() + FOLD_RETRY_MS, { replace: true })
            .catch(() => {});
          return "failed" as const;
        });
      if (report !== undefined) forced = false; // one fold whatever it takes, not one per failure
      if (typeof report === "object" && report.published) folded++;
    }
    return folded;
  }

  /** How long a fold of the user's log would take here: unknown (infinite) without a copy of it. */
  private foldEstimateMs(userId: string): number {
    const held = this.host.held(userId);
    return held ? held.foldBytes() / this.uploadRate : Number.POSITIVE_INFINITY;
  }

  /**
   * Folds the user's log if it is still past the threshold (another instance may have folded
   * it; its request goes then), once this copy has replayed it by `catchUpBy`: "behind" when it
   * has not (the request stays, and the copy keeps what it replayed for the next pass).
   */
  private async foldIfDue(userId: string, catchUpBy: number): Promise<CompactionReport | "behind" | undefined> {
    const pointer = await this.options.pointers.get(userId);
    if (!pointer || !logPast(pointer, this.options.compactAfter)) {
      this.due.delete(userId);
      await this.options.pointers.compactionDone(userId);
      return undefined;
    }
    const replica = await this.host.replicaAt(userId, pointer, catchUpBy);
    if (replica.seq < headSeq(pointer)) return "behind";
    return this.fold(userId, pointer, replica);
  }

  /**
   * Folds the log into a new base now, for a scheduled pass (off the request path). With
   * `vacuum`, a file whose free pages are more than a quarter of it (sessions removed or
   * rewritten) is rewritten first: every chunk is then uploaded again. Undefined when there was
   * nothing to fold. @throws when the pointer moved meanwhile (another writer: try later)
   */
  async compact(userId: string, options: { vacuum?: boolean } = {}): Promise<CompactionReport | undefined> {
    await loadWasmSqlite();
    return this.host.exclusive(userId, async () => {
      const pointer = await this.options.pointers.get(userId);
      if (!pointer) return undefined;
      const replica = await this.host.replicaAt(userId, pointer);
      let vacuumed = false;
      if (options.vacuum && (await replica.run(async () => freeShare(replica.driver))) > VACUUM_FREE_SHARE) {
        await replica.materialize();
        replica.driver.exec("VACUUM");
        vacuumed = true;
      }
      if (!vacuumed && pointer.log.length === 0) return undefined;
      return this.fold(userId, pointer, replica);
    });
  }

  /** Uploads what the copy (at `pointer`'s head) wrote since its base, then moves the pointer to the new base. */
  private async fold(userId: string, pointer: Pointer, replica: Replica): Promise<CompactionReport> {
    const t0 = performance.now();
    const report: CompactionReport = { userId, ms: 0, uploaded: 0, published: false };
    try {
      const made = await replica.compact(userId);
      report.uploaded = made.uploaded;
      report.kind = made.kind;
      const at = Date.now();
      const next: Pointer = {
        rev: pointer.rev + 1,
        epoch: pointer.epoch,
        base: { key: made.key, seq: replica.seq },
        log: [],
        retired: [
          // Past the sweep's age a retired object is unprotected anyway: the item stays small.
          ...pointer.retired.filter((r) => at - r.at < RETIRED_KEPT_MS).slice(-MAX_RETIRED),
          ...pointer.log.map((entry) => ({ key: entry.key, at })),
          ...(pointer.base ? [{ key: pointer.base.key, at }] : []),
        ],
      };
      try {
        report.published = await this.options.pointers.move(userId, pointer, next);
      } catch (error) {
        if (!(error instanceof AmbiguousPointerWrite)) throw error;
        report.published = (await this.options.pointers.get(userId))?.base?.key === made.key;
      }
      if (!report.published) throw new Error(`the search index of ${userId} changed while it was compacted`);
      replica.rebase({ key: made.key, manifest: made.manifest });
      this.due.delete(userId);
      this.requested.delete(userId);
      await this.options.pointers.compactionDone(userId).catch(() => {}); // a stale request: the next pass finds nothing to fold
      return report;
    } finally {
      report.ms = performance.now() - t0;
      if (report.published && report.ms > 0) this.uploadRate = Math.max(100, report.uploaded / report.ms);
      this.options.onCompaction?.(report);
    }
  }

  /**
   * Removes the user's objects no pointer names, once older than `minAgeMs`, and forgets retired
   * objects past that age. For a scheduled pass, never a request: it lists the user's objects.
   */
  sweep(userId: string, minAgeMs = RETIRED_KEPT_MS): Promise<{ removed: number }> {
    return this.host.exclusive(userId, () => sweepUser(this.options.blobs, this.options.pointers, userId, minAgeMs));
  }
}
