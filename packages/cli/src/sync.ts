/**
 * Backing up one session file: send every complete line the server does not have yet, exactly
 * once, whatever crashed before.
 *
 * - Only complete lines are sent (up to the last `\n`); a partial last line waits.
 * - Bytes go in batches of at most 1 MiB, gzip-compressed, at the offset the server confirmed.
 *   A line too large for a request goes through an upload (see the API).
 * - The state remembers the confirmed offset, a fingerprint of the bytes before it and the
 *   file's inode. A file shorter than confirmed, or whose confirmed bytes changed (pi migrated
 *   or rewrote it, it was truncated or edited), while the cloud holds exactly what this
 *   machine confirmed, becomes a new generation at once (the cloud keeps the old one).
 * - Otherwise (no state, another inode, the server disagrees: 409, 412, 404) the file is
 *   compared with the cloud copy byte for byte: if the cloud copy is a prefix of the file,
 *   sending resumes where it ends; if it is longer, another machine went on; else the whole
 *   file becomes a new generation.
 * - Merge (on unless `merge: false`): when the file and the cloud copy share their header and
 *   a common part and each only appended complete lines since, the two are joined by entry id
 *   (see `merge.ts`): the file's lines the cloud lacks go in one append at the cloud's head, the
 *   cloud's lines the file lacks are appended to the file. The state then keeps `cloudAt`, the
 *   cloud offset matching the file's `sent` (the same entries, in another order).
 */
import { statSync } from "node:fs";
import { DICT_BYTES } from "@pisync/protocol";
import * as z from "zod/mini";
import { type Api, ApiError, Transient, Unauthorized } from "./api.js";
import { resendMissing, sendBlobs } from "./blobs.js";
import { readRange } from "./files.js";
import { headerOf } from "./header.js";
import { appendWholeLines } from "./local-append.js";
import type { Logger } from "./log.js";
import { decideMerge, devicesAt, joinLines, resumeMarker, type WriterRun } from "./merge.js";
import { type FileState, fingerprint, fingerprintBetween, isCurrentFingerprint, type StateStore } from "./state.js";
import { putInTeam, type TeamFolder, teamOfFolder } from "./team-folders.js";
import { slotHash, slotLengthOf, slotWinner, writeSlot } from "./title-slot.js";

export { Transient, Unauthorized };

/** The cloud's bytes before the offset are not the file's (found by the dictionary's checksum). */
class Diverged extends Error {}

/**
 * How a file differs from what the state says was confirmed from it: `shrunk` (shorter than
 * confirmed), `renamed` (only its title slot changed: oh-my-pi renamed the session),
 * `rewritten` (other confirmed bytes changed), `replaced` (another inode), `unknown` (no usable
 * state); undefined when it continues the confirmed bytes.
 */
export type LocalChange = "shrunk" | "renamed" | "rewritten" | "replaced" | "unknown";

/** Whether the confirmed bytes changed in the title slot only (same length, the bytes after it as confirmed). */
function renamedOnly(path: string, known: FileState, complete: number): boolean {
  const slot = known.slot;
  if (!slot || slotLengthOf(path, complete) !== slot.length) return false;
  return fingerprintBetween(path, slot.length, known.sent) === slot.tail;
}

export function localChange(
  path: string,
  known: FileState | undefined,
  file: { sessionId: string; complete: number; ino?: number },
): LocalChange | undefined {
  if (!known || known.sessionId !== file.sessionId || !isCurrentFingerprint(known.fingerprint)) return "unknown";
  if (known.sent > file.complete) return "shrunk";
  if (known.ino !== undefined && file.ino !== undefined && known.ino !== file.ino) return "replaced";
  if (fingerprint(path, known.sent) !== known.fingerprint) {
    if (renamedOnly(path, known, file.complete)) return "renamed";
    // A state from before slots were kept, of a file with one: compared with the cloud past its slot.
    if (!known.slot && slotLengthOf(path, file.complete) !== undefined) return "unknown";
    return "rewritten";
  }
  return undefined;
}

export interface SyncContext {
  api: Api;
  state: StateStore;
  log: Logger;
  /** Uncompressed bytes per request (default 1 MiB). */
  batchBytes?: number;
  /** Lines longer than this go through an upload (default 3 MiB). */
  uploadOver?: number;
  /** Called with bytes as they are confirmed (progress bars). */
  onProgress?: (bytes: number) => void;
  /** Join copies continued on two machines by entry id (default); false: the old rule, a new generation. */
  merge?: boolean;
  /** Folder rules: a session first backed up from under one goes in its team (see team-folders.ts). */
  teamFolders?: readonly TeamFolder[];
  /**
   * What the server holds, by session id, from its session list read once (a push to a server
   * or account that confirmed little of this machine's files): a file's first look takes its
   * cloud length and generation from here instead of one request of its own; a session not
   * listed is not in the cloud. A stale entry only costs a conflict, which asks the server.
   */
  listed?: ReadonlyMap<string, { offset: number; generation: number }>;
}

export type SyncResult =
  | { status: "synced"; sessionId: string; sent: number; generation: number; bytes: number }
  | { status: "idle" | "behind"; sessionId?: string; sent: number }
  | { status: "merged"; sessionId: string; sent: number; generation: number; fromCloud: number; toCloud: number }
  | { status: "gone" }
  | { status: "skipped"; reason: string };

const NEWLINE = 0x0a;
const MiB = 1024 * 1024;
/** The cloud copy is compared with the file this much at a time. */
const COMPARE_BYTES = 4 * MiB;

/** Bytes up to and including the file's last `\n` (reads backwards: 64 KiB, then 1 MiB at a time). */
export function completeLengthOf(path: string, size: number): number {
  let end = size;
  let step = 64 * 1024;
  while (end > 0) {
    const start = Math.max(0, end - step);
    const chunk = readRange(path, start, end);
    const at = chunk.lastIndexOf(NEWLINE);
    if (at >= 0) return start + at + 1;
    end = start;
    step = MiB;
  }
  return 0;
}

/** The session id of a file: its header's (an oh-my-pi title slot line may come first). */
export function sessionIdOf(path: string, complete: number): string | undefined {
  // Headers are short; a title slot is fixed-width: 64 KiB holds both, else read up to 4 MiB.
  let head = readRange(path, 0, Math.min(complete, 64 * 1024));
  if (head.indexOf(NEWLINE, head.indexOf(NEWLINE) + 1) < 0) head = readRange(path, 0, Math.min(complete, 4 * MiB));
  return headerOf(head)?.header.id;
}

function now(): string {
  return new Date().toISOString();
}

/** The first offset in [from, n) where the cloud's bytes are not the file's (-1: none), compared 4 MiB at a time. */
async function firstDifference(api: Api, path: string, sessionId: string, from: number, n: number): Promise<number> {
  for (let start = from; start < n; start += COMPARE_BYTES) {
    const end = Math.min(n, start + COMPARE_BYTES);
    const cloud = Buffer.from(await api.range(sessionId, start, end));
    const local = Buffer.from(readRange(path, start, end));
    if (local.equals(cloud)) continue;
    let at = 0;
    while (at < local.length && local[at] === cloud[at]) at++;
    return start + at;
  }
  return -1;
}

/** The cloud offset matching the file's confirmed bytes (the same entries, maybe in another order). */
export function cloudAtOf(state: FileState): number {
  return state.cloudAt ?? state.sent;
}

/**
 * Where a merge starts: the file's [0, sent) and the cloud's [0, cloudAt) hold the same entries;
 * `differ`: in another order (after a merge), else byte for byte.
 */
interface MergeBase {
  sent: number;
  cloudAt: number;
  generation: number;
  differ: boolean;
}

/** The known common part of a state. */
function baseOf(state: FileState): MergeBase {
  return {
    sent: state.sent,
    cloudAt: cloudAtOf(state),
    generation: state.generation,
    differ: state.cloudAt !== undefined,
  };
}

const Writers = z.object({ writers: z.optional(z.array(z.object({ offset: z.number(), device: z.string() }))) });

/** Who wrote which bytes of a session (servers without it, or failing: none). */
async function writersOf(api: Api, sessionId: string): Promise<WriterRun[]> {
  try {
    const meta = Writers.safeParse(await api.json(`/v1/sessions/${encodeURIComponent(sessionId)}`));
    return meta.success ? (meta.data.writers ?? []) : [];
  } catch {
    return [];
  }
}

/** Why a new generation is made, by the local change that caused it: for `status`, and for the log. */
const REASONS = {
  shrunk: ["truncated", "the file is shorter than what was backed up"],
  rewritten: ["rewritten", "the file was rewritten"],
  diverged: ["merge turned off", "another machine wrote this session too"],
} as const;

/** Where a reconcile or a merge left the file: its state, whether it waits, what a merge moved. */
interface Step {
  state: FileState;
  /** Nothing to send now (the cloud holds more than the file and it waits). */
  behind?: boolean;
  merged?: { fromCloud: number; toCloud: number };
}

class SessionSync {
  private reconciles = 0;

  constructor(
    private readonly ctx: SyncContext,
    private readonly path: string,
    private readonly sessionId: string,
    private complete: number,
    private readonly ino?: number,
  ) {}

  private save(change: Partial<FileState> & { sent: number; generation: number }): FileState {
    const previous = this.ctx.state.get(this.path);
    // What is known of a generation (merges, why it was made) does not carry over to another.
    const kept =
      previous?.generation === change.generation
        ? previous
        : { ...previous, diverged: undefined, reason: undefined, merged: undefined, cloudAt: undefined };
    const slotLength = slotLengthOf(this.path, change.sent);
    const state: FileState = {
      ...kept,
      ...change,
      sessionId: this.sessionId,
      slot:
        slotLength === undefined
          ? undefined
          : {
              length: slotLength,
              hash: slotHash(readRange(this.path, 0, slotLength)),
              tail: fingerprintBetween(this.path, slotLength, change.sent),
            },
      fingerprint: fingerprint(this.path, change.sent),
      local: this.complete,
      ino: this.ino,
      updatedAt: now(),
    };
    this.ctx.state.set(this.path, state);
    return state;
  }

  /**
   * Brings the file's title slot and the cloud's to the same bytes, the last rename's (see
   * `title-slot.ts`): a rename sent (a few hundred bytes, no generation) or the cloud's slot
   * written into the file in place. `mismatch`: the cloud's first line is no title slot of this
   * length (the caller falls back to comparing the copies).
   */
  async syncSlot(generation: number): Promise<"none" | "same" | "sent" | "adopted" | "mismatch" | "waiting"> {
    const length = slotLengthOf(this.path, this.complete);
    if (length === undefined || generation <= 0) return "none";
    const local = readRange(this.path, 0, length);
    const cloud = await this.ctx.api.range(this.sessionId, 0, length);
    const winner = slotWinner(local, cloud);
    if (winner === "same" || winner === "mismatch") return winner;
    if (winner === "local") {
      try {
        await this.ctx.api.rename(this.sessionId, local, generation);
      } catch (error) {
        if (error instanceof ApiError && (error.status === 409 || error.status === 412 || error.status === 404)) {
          return "mismatch";
        }
        throw error;
      }
      this.ctx.log.event("renamed", { path: this.path, sessionId: this.sessionId, bytes: length });
      return "sent";
    }
    if (!writeSlot(this.path, local, cloud)) return "waiting";
    this.ctx.log.event("renamed", { path: this.path, sessionId: this.sessionId, from: "cloud" });
    return "adopted";
  }

  /** The offset the copies are compared from: past the title slot when both have one of the same length. */
  private async comparedFrom(trusted: number, n: number): Promise<number> {
    const length = slotLengthOf(this.path, this.complete);
    if (length === undefined || trusted >= length || n < length) return trusted;
    const winner = slotWinner(readRange(this.path, 0, length), await this.ctx.api.range(this.sessionId, 0, length));
    if (winner === "mismatch") return trusted;
    // The slots differ only by a rename: the run brings them together afterwards.
    if (winner !== "same") this.slotPending = true;
    return length;
  }

  /** A title slot that differs from the cloud's: brought together at the end of the run. */
  private slotPending = false;

  /**
   * Where sending should start, after asking the server. May merge, or start a new generation.
   * `change` says why: how the file differs from the state, or `conflict` when the server disagreed.
   */
  async reconcile(change: LocalChange | "conflict"): Promise<Step> {
    if (++this.reconciles > 4) throw new Transient("the server kept changing under this file; trying later");
    const { api, listed } = this.ctx;
    // The first look may come from the list read for the whole push; a conflict asks afresh.
    const cloud =
      listed && change !== "conflict" && this.reconciles === 1
        ? listed.get(this.sessionId)
        : await api.head(this.sessionId);
    if (!cloud || cloud.offset === 0) return { state: this.save({ sent: 0, generation: 0, diverged: false }) };
    const previous = this.ctx.state.get(this.path);
    const same =
      previous !== undefined && previous.sessionId === this.sessionId && isCurrentFingerprint(previous.fingerprint);
    // The cloud copy is exactly what this machine confirmed from this file: a file now shorter,
    // or with other bytes before that point, is no longer its continuation.
    const ours = same && previous.generation === cloud.generation && cloudAtOf(previous) === cloud.offset;
    if (ours && (change === "shrunk" || change === "rewritten")) return { state: await this.startGeneration(change) };
    // Bytes this machine confirmed and that the file still holds need no second look (when
    // they are the cloud's bytes too: not after a merge).
    const trusted =
      same &&
      previous.generation === cloud.generation &&
      previous.cloudAt === undefined &&
      previous.sent <= Math.min(cloud.offset, this.complete) &&
      localChange(this.path, previous, { sessionId: this.sessionId, complete: this.complete, ino: this.ino }) ===
        undefined
        ? previous.sent
        : 0;
    const n = Math.min(cloud.offset, this.complete);
    const differs = await firstDifference(api, this.path, this.sessionId, await this.comparedFrom(trusted, n), n);
    // A file this machine truncated or rewrote is not merged: it becomes a generation of its own.
    const mergeable = this.merging && change !== "shrunk" && change !== "rewritten";
    if (differs < 0) {
      if (cloud.offset <= this.complete) {
        return { state: this.save({ sent: cloud.offset, generation: cloud.generation, cloudAt: undefined }) };
      }
      if (ours) return { state: await this.startGeneration("shrunk") };
      // The cloud holds more than this file: another machine went on. Merged: its lines are
      // appended here. Else nothing to send until this file changes; then it diverges.
      if (mergeable)
        return this.mergeFrom({
          sent: this.complete,
          cloudAt: this.complete,
          generation: cloud.generation,
          differ: false,
        });
      return { state: this.save({ sent: this.complete, generation: cloud.generation }), behind: true };
    }
    // The file no longer continues the cloud copy: rewritten here, or written elsewhere too.
    // The cloud holding just what this file confirmed, byte for byte: rewritten here.
    if (ours && previous.cloudAt === undefined) return { state: await this.startGeneration("rewritten") };
    const common = completeLengthOf(this.path, differs);
    if (mergeable && common > 0) {
      return this.mergeFrom({ sent: common, cloudAt: common, generation: cloud.generation, differ: false });
    }
    if (mergeable) return { state: await this.startGeneration("another header") };
    if (this.merging) return { state: await this.startGeneration(change === "shrunk" ? "shrunk" : "rewritten") };
    const diverged = previous !== undefined && cloud.generation === previous.generation && cloud.offset > previous.sent;
    return { state: await this.startGeneration(diverged ? "diverged" : "rewritten") };
  }

  private get merging(): boolean {
    return this.ctx.merge ?? true;
  }

  /** A merge from a known common part; when the cloud became another generation meanwhile, reconciles. */
  private async mergeFrom(base: MergeBase): Promise<Step> {
    return (await this.merge(base)) ?? this.reconcile("conflict");
  }

  /**
   * One merge (see `merge.ts`): the file's lines after `sent` and the cloud's after `cloudAt`
   * (the common part: the same entries), joined by entry id. The file's lines go in one append
   * at the cloud's head (a moved head: the round again); the cloud's are appended to the file
   * only while nothing is pending in it (else `behind`: the next change of the file retries).
   * The state moves only when both hold the same entries; any crash is repaired by the next
   * round, which recognises lines already present by id. Undefined: the cloud is another
   * generation now (compare byte for byte).
   */
  async merge(base: MergeBase): Promise<Step | undefined> {
    const { api } = this.ctx;
    for (;;) {
      if (++this.reconciles > 8) throw new Transient("the server kept changing under this file; trying later");
      const cloud = await api.head(this.sessionId);
      if (!cloud || cloud.generation !== base.generation || cloud.offset < base.cloudAt) return undefined;
      const theirs = await api.range(this.sessionId, base.cloudAt, cloud.offset);
      const ours = readRange(this.path, base.sent, this.complete);
      // The file's common part too, when the cloud has lines to take: a cloud line may not reuse
      // its ids, and names its parents there (a round of this file's own lines reads no more).
      const common = theirs.length > 0 ? readRange(this.path, 0, base.sent) : undefined;
      const decision = decideMerge(ours, theirs, { common, marker: resumeMarker });
      if (decision.kind === "generation") {
        let reason = decision.reason;
        if (decision.cloudAt !== undefined) {
          const [device] = devicesAt(await writersOf(api, this.sessionId), [base.cloudAt + decision.cloudAt]);
          if (device) reason += ` (written on ${device})`;
        }
        return { state: await this.startGeneration(reason) };
      }
      const { toCloud, toLocal } = decision;
      // Counted and attributed: entries of the conversation, not resume markers.
      const sent = toCloud.filter((line) => !line.marker).length;
      const received = toLocal.filter((line) => !line.marker);
      let head = cloud.offset;
      if (toCloud.length > 0) {
        try {
          head = (await this.sendLines(joinLines(toCloud), cloud.offset, cloud.generation)).offset;
        } catch (error) {
          // The head moved (another machine appended): the round again.
          if (error instanceof ApiError && (error.status === 409 || error.status === 412)) continue;
          throw error;
        }
      }
      const previous = this.ctx.state.get(this.path);
      const counts = previous?.generation === cloud.generation ? previous.merged : undefined;
      let merged = { fromCloud: counts?.fromCloud ?? 0, toCloud: (counts?.toCloud ?? 0) + sent };
      let devices = counts?.devices ?? [];
      if (toLocal.length > 0) {
        const appended = appendWholeLines(this.path, joinLines(toLocal), this.complete);
        if (appended !== "appended") {
          // pi is writing: the state stays; the file's next change runs the round again.
          this.ctx.log.event("merge-waiting", { path: this.path, sessionId: this.sessionId, reason: appended });
          const state = this.save({
            sent: base.sent,
            generation: base.generation,
            cloudAt: base.differ ? base.cloudAt : undefined,
            merged: { ...merged, ...(devices.length ? { devices } : {}) },
          });
          return { state, behind: true };
        }
        this.complete += toLocal.reduce((n, line) => n + line.bytes.length, 0);
        const writers = await writersOf(api, this.sessionId);
        const from = devicesAt(
          writers,
          received.map((line) => base.cloudAt + line.at),
        );
        devices = [...new Set([...devices, ...from])];
        merged = { ...merged, fromCloud: merged.fromCloud + received.length };
      }
      const changed = toCloud.length > 0 || toLocal.length > 0;
      if (changed) {
        this.ctx.log.event("merged", {
          path: this.path,
          sessionId: this.sessionId,
          generation: cloud.generation,
          fromCloud: received.length,
          toCloud: sent,
          ...(devices.length ? { devices: devices.join(",") } : {}),
        });
      }
      // The file's bytes are the cloud's only when it had no lines of its own and was the cloud's before.
      const sameBytes = ours.length === 0 && !base.differ && !toLocal.some((line) => line.at < 0);
      const state = this.save({
        sent: this.complete,
        generation: cloud.generation,
        cloudAt: sameBytes ? undefined : head,
        ...(changed ? { merged: { ...merged, ...(devices.length ? { devices } : {}) } } : {}),
      });
      return { state, merged: changed ? { fromCloud: received.length, toCloud: sent } : undefined };
    }
  }

  /**
   * Sends the file from its start as a new generation (the cloud keeps the one it replaces).
   * `why`: the local change, or the reason a merge was not possible ("conflict on entry …").
   */
  async startGeneration(why: "shrunk" | "rewritten" | "diverged" | (string & {})): Promise<FileState> {
    const [reason, said] = REASONS[why as keyof typeof REASONS] ?? [why, why];
    const response = await this.send(this.batch(0), 0, { replace: true });
    this.ctx.log.event("generation", {
      path: this.path,
      sessionId: this.sessionId,
      generation: response.generation,
      reason: said,
    });
    return this.save({
      sent: response.offset,
      generation: response.generation,
      diverged: true,
      reason,
      cloudAt: undefined,
    });
  }

  /** The next batch from `start`: whole lines, at most the batch size unless one line is larger. */
  batch(start: number): { start: number; end: number; upload: boolean } {
    const limit = this.ctx.batchBytes ?? MiB;
    const end = Math.min(this.complete, start + limit);
    const chunk = readRange(this.path, start, end);
    const cut = chunk.lastIndexOf(NEWLINE);
    if (cut >= 0) return { start, end: start + cut + 1, upload: false };
    // One line longer than a batch: find its end.
    let lineEnd = end;
    while (lineEnd < this.complete) {
      const next = readRange(this.path, lineEnd, Math.min(this.complete, lineEnd + MiB));
      const at = next.indexOf(NEWLINE);
      if (at >= 0) {
        lineEnd += at + 1;
        break;
      }
      lineEnd += next.length;
    }
    return { start, end: lineEnd, upload: lineEnd - start > (this.ctx.uploadOver ?? 3 * MiB) };
  }
  /** Whole lines at the cloud offset `at`, in one append (plain gzip: the bytes before differ from the file's). */
  private async sendLines(bytes: Uint8Array, at: number, generation: number) {
    const { api } = this.ctx;
    await sendBlobs(api, this.ctx.state, this.path, bytes, this.ctx.log);
    const uploadId =
      bytes.length > (this.ctx.uploadOver ?? 3 * MiB) ? await api.upload(this.sessionId, bytes) : undefined;
    const response = await api.write(this.sessionId, bytes, { offset: at, generation, uploadId });
    return resendMissing(api, this.ctx.state, this.path, response, this.ctx.log);
  }

  /**
   * A batch of the file, appended at the cloud offset `at` (after a merge, not the file's; then
   * `merged`: the bytes before it differ from the file's, whatever the offsets, so no dictionary).
   */
  async send(
    range: { start: number; end: number; upload: boolean },
    generation: number,
    options: { replace?: boolean; at?: number; merged?: boolean } = {},
  ) {
    const { api } = this.ctx;
    const bytes = readRange(this.path, range.start, range.end);
    const at = options.at ?? range.start;
    // Blobs first: an entry never reaches the cloud before the image it names.
    await sendBlobs(api, this.ctx.state, this.path, bytes, this.ctx.log);
    const uploadId = range.upload ? await api.upload(this.sessionId, bytes) : undefined;
    const write = async (dictionary?: Uint8Array) =>
      resendMissing(
        api,
        this.ctx.state,
        this.path,
        await api.write(this.sessionId, bytes, {
          offset: at,
          generation: generation > 0 && !options.replace ? generation : undefined,
          replace: options.replace,
          uploadId,
          dictionary,
        }),
        this.ctx.log,
      );
    if (uploadId || options.replace || range.start === 0 || options.merged) return write();
    try {
      return await write(readRange(this.path, Math.max(0, range.start - DICT_BYTES), range.start));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      // The committed bytes before the offset are not this file's: it diverged from the cloud.
      if (error.reason === "dictionary_mismatch") {
        // A title slot renamed on one side only differs from the cloud's: bring the two
        // together (a rename, not a divergence), then the dictionary again.
        const synced = range.start < DICT_BYTES + 4096 ? await this.syncSlot(generation) : "none";
        if (synced === "sent" || synced === "adopted") {
          return write(readRange(this.path, Math.max(0, range.start - DICT_BYTES), range.start)).catch((again) => {
            if (again instanceof ApiError && again.reason === "dictionary_mismatch") throw new Diverged(again.message);
            throw again;
          });
        }
        throw new Diverged(error.message);
      }
      // A server without the dictionary encoding: plain gzip.
      if (error.reason === "unsupported_encoding") return write();
      throw error;
    }
  }

  async run(checkServer: boolean): Promise<SyncResult> {
    const { ctx } = this;
    let state = ctx.state.get(this.path);
    // Does the file still continue what the server confirmed?
    let change = localChange(this.path, state, { sessionId: this.sessionId, complete: this.complete, ino: this.ino });
    if (change === "renamed" && state) {
      // omp renamed the session: its title slot goes as a rename; the rest is unchanged.
      const synced = await this.syncSlot(state.generation);
      if (synced === "mismatch") change = "rewritten";
      else {
        state = this.save({ sent: state.sent, generation: state.generation });
        change = undefined;
      }
    }
    let step: Step | undefined;
    if (state && checkServer) {
      // On start: does the server still hold what the state says it confirmed?
      const cloud = await ctx.api.head(this.sessionId);
      const moved = cloud && cloud.generation === state.generation && cloud.offset > cloudAtOf(state);
      if (moved && !change && this.merging) step = await this.merge(baseOf(state));
      if (!step && (!cloud || cloud.offset !== cloudAtOf(state) || cloud.generation !== state.generation)) {
        state = undefined;
      }
    }
    if (!step && (!state || change)) step = await this.reconcile(change ?? "unknown");
    const merged = { fromCloud: 0, toCloud: 0 };
    const follow = (next: Step): FileState => {
      merged.fromCloud += next.merged?.fromCloud ?? 0;
      merged.toCloud += next.merged?.toCloud ?? 0;
      return next.state;
    };
    if (step) {
      if (step.behind) return { status: "behind", sessionId: this.sessionId, sent: step.state.sent };
      state = follow(step);
    }
    let current = state as FileState;
    const startedAt = current.sent;
    while (current.sent < this.complete) {
      const range = this.batch(current.sent);
      try {
        const response = await this.send(range, current.generation, {
          at: cloudAtOf(current),
          merged: current.cloudAt !== undefined,
        });
        current = this.save({
          sent: range.end,
          generation: response.generation,
          cloudAt: current.cloudAt === undefined ? undefined : response.offset,
          lastError: undefined,
        });
        ctx.onProgress?.(range.end - range.start);
        for (const problem of response.problems) {
          ctx.log.event("problem", { path: this.path, sessionId: this.sessionId, message: problem.message });
        }
      } catch (error) {
        if (error instanceof Diverged) {
          current = await this.startGeneration(this.merging ? "rewritten" : "diverged");
          continue;
        }
        if (!(error instanceof ApiError) || error instanceof Unauthorized) throw error;
        if (error.status === 409 || error.status === 412 || error.status === 404) {
          // Another machine appended: joined by entry id from the known common part.
          const next =
            (error.status === 409 && this.merging ? await this.merge(baseOf(current)) : undefined) ??
            (await this.reconcile("conflict"));
          if (next.behind) return { status: "behind", sessionId: this.sessionId, sent: next.state.sent };
          current = follow(next);
          continue;
        }
        // A request the server refuses as it is (400, 413): retrying would not help.
        this.save({ sent: current.sent, generation: current.generation, lastError: error.message });
        return { status: "skipped", reason: error.message };
      }
    }
    // Lines from the cloud may come with a rename made there; a start, or a compare that
    // found the slots apart, asks too.
    if (this.slotPending || checkServer || merged.fromCloud > 0) {
      this.slotPending = false;
      const synced = await this.syncSlot(current.generation);
      if (synced === "sent" || synced === "adopted")
        current = this.save({ sent: current.sent, generation: current.generation });
    }
    if (merged.fromCloud > 0 || merged.toCloud > 0) {
      return {
        status: "merged",
        sessionId: this.sessionId,
        sent: current.sent,
        generation: current.generation,
        ...merged,
      };
    }
    if (current.sent === startedAt) return { status: "idle", sessionId: this.sessionId, sent: current.sent };
    return {
      status: "synced",
      sessionId: this.sessionId,
      sent: current.sent,
      generation: current.generation,
      bytes: current.sent - startedAt,
    };
  }
}

/** Puts a session just backed up in its folder's team; a refusal is logged, never fails the push. */
async function shareByFolder(path: string, sessionId: string, complete: number, ctx: SyncContext): Promise<void> {
  const head = readRange(path, 0, Math.min(complete, 64 * 1024));
  const team = teamOfFolder(ctx.teamFolders ?? [], headerOf(head)?.header.cwd);
  if (!team) return;
  try {
    await putInTeam(ctx.api, sessionId, team);
    ctx.log.event("team", { path, sessionId, team });
  } catch (error) {
    ctx.log.event("team-failed", { path, sessionId, team, error: (error as Error).message });
  }
}

/** Sends what the server does not have of one file. Throws `Transient` (retry later) or `Unauthorized`. */
export async function syncFile(
  path: string,
  ctx: SyncContext,
  options: { checkServer?: boolean } = {},
): Promise<SyncResult> {
  let size: number;
  let ino: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return { status: "skipped", reason: "not a file" };
    size = stat.size;
    ino = stat.ino;
  } catch {
    return { status: "gone" };
  }
  const complete = completeLengthOf(path, size);
  if (complete === 0) return { status: "idle", sent: 0 };
  const sessionId = sessionIdOf(path, complete);
  if (!sessionId) {
    return { status: "skipped", reason: "no session header on the first line: nothing names this session" };
  }
  const result = await new SessionSync(ctx, path, sessionId, complete, ino).run(options.checkServer ?? false);
  if (result.status === "synced") {
    ctx.log.event("synced", {
      path,
      sessionId,
      bytes: result.bytes,
      offset: result.sent,
      generation: result.generation,
    });
    // The session's first push (all of its first generation sent now): its folder's team, if any.
    if (ctx.teamFolders?.length && result.generation === 1 && result.bytes === result.sent) {
      await shareByFolder(path, sessionId, complete, ctx);
    }
  }
  return result;
}
