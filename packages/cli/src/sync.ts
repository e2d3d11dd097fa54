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
 */
import { statSync } from "node:fs";
import { DICT_BYTES } from "@pisync/protocol";
import { type Api, ApiError, Transient, Unauthorized } from "./api.js";
import { sendBlobs } from "./blobs.js";
import { readRange } from "./files.js";
import { headerOf } from "./header.js";
import type { Logger } from "./log.js";
import { type FileState, fingerprint, isCurrentFingerprint, type StateStore } from "./state.js";

export { Transient, Unauthorized };

/** The cloud's bytes before the offset are not the file's (found by the dictionary's checksum). */
class Diverged extends Error {}

/**
 * How a file differs from what the state says was confirmed from it: `shrunk` (shorter than
 * confirmed), `rewritten` (confirmed bytes changed), `replaced` (another inode), `unknown`
 * (no usable state); undefined when it continues the confirmed bytes.
 */
export type LocalChange = "shrunk" | "rewritten" | "replaced" | "unknown";

export function localChange(
  path: string,
  known: FileState | undefined,
  file: { sessionId: string; complete: number; ino?: number },
): LocalChange | undefined {
  if (!known || known.sessionId !== file.sessionId || !isCurrentFingerprint(known.fingerprint)) return "unknown";
  if (known.sent > file.complete) return "shrunk";
  if (known.ino !== undefined && file.ino !== undefined && known.ino !== file.ino) return "replaced";
  if (fingerprint(path, known.sent) !== known.fingerprint) return "rewritten";
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
}

export type SyncResult =
  | { status: "synced"; sessionId: string; sent: number; generation: number; bytes: number }
  | { status: "idle" | "behind"; sessionId?: string; sent: number }
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

/** Whether the cloud's bytes [from, n) are the file's, compared 4 MiB at a time. */
async function cloudMatches(api: Api, path: string, sessionId: string, from: number, n: number): Promise<boolean> {
  for (let start = from; start < n; start += COMPARE_BYTES) {
    const end = Math.min(n, start + COMPARE_BYTES);
    const cloud = await api.range(sessionId, start, end);
    if (!Buffer.from(readRange(path, start, end)).equals(cloud)) return false;
  }
  return true;
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
    const state: FileState = {
      ...this.ctx.state.get(this.path),
      ...change,
      sessionId: this.sessionId,
      fingerprint: fingerprint(this.path, change.sent),
      local: this.complete,
      ino: this.ino,
      updatedAt: now(),
    };
    this.ctx.state.set(this.path, state);
    return state;
  }

  /**
   * Where sending should start, after asking the server. May start a new generation. `change`
   * says why: how the file differs from the state, or `conflict` when the server disagreed.
   */
  async reconcile(change: LocalChange | "conflict"): Promise<{ state: FileState; behind?: boolean }> {
    if (++this.reconciles > 4) throw new Transient("the server kept changing under this file; trying later");
    const { api } = this.ctx;
    const cloud = await api.head(this.sessionId);
    if (!cloud || cloud.offset === 0) return { state: this.save({ sent: 0, generation: 0, diverged: false }) };
    const previous = this.ctx.state.get(this.path);
    const same =
      previous !== undefined && previous.sessionId === this.sessionId && isCurrentFingerprint(previous.fingerprint);
    // The cloud copy is exactly what this machine confirmed from this file: a file now shorter,
    // or with other bytes before that point, is no longer its continuation.
    const ours = same && previous.generation === cloud.generation && previous.sent === cloud.offset;
    if (ours && (change === "shrunk" || change === "rewritten")) return { state: await this.startGeneration(change) };
    // Bytes this machine confirmed and that the file still holds need no second look.
    const trusted =
      same &&
      previous.generation === cloud.generation &&
      previous.sent <= Math.min(cloud.offset, this.complete) &&
      localChange(this.path, previous, { sessionId: this.sessionId, complete: this.complete, ino: this.ino }) ===
        undefined
        ? previous.sent
        : 0;
    const n = Math.min(cloud.offset, this.complete);
    if (await cloudMatches(api, this.path, this.sessionId, trusted, n)) {
      if (cloud.offset <= this.complete) {
        return { state: this.save({ sent: cloud.offset, generation: cloud.generation }) };
      }
      if (ours) return { state: await this.startGeneration("shrunk") };
      // The cloud holds more than this file: another machine went on. Nothing to send until
      // this file changes; then it diverges, and becomes a generation of its own.
      return { state: this.save({ sent: this.complete, generation: cloud.generation }), behind: true };
    }
    // The file no longer continues the cloud copy: rewritten here, or written elsewhere too.
    const diverged = previous !== undefined && cloud.generation === previous.generation && cloud.offset > previous.sent;
    return { state: await this.startGeneration(diverged ? "diverged" : "rewritten") };
  }

  /** Sends the file from its start as a new generation (the cloud keeps the one it replaces). */
  async startGeneration(why: "shrunk" | "rewritten" | "diverged"): Promise<FileState> {
    const diverged = why === "diverged";
    const answer = await this.send(this.batch(0), 0, { replace: true });
    this.ctx.log.event("generation", {
      path: this.path,
      sessionId: this.sessionId,
      generation: answer.generation,
      reason: {
        diverged: "another machine wrote this session too",
        shrunk: "the file is shorter than what was backed up",
        rewritten: "the file was rewritten",
      }[why],
    });
    return this.save({ sent: answer.offset, generation: answer.generation, diverged });
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

  async send(
    range: { start: number; end: number; upload: boolean },
    generation: number,
    options: { replace?: boolean } = {},
  ) {
    const { api } = this.ctx;
    const bytes = readRange(this.path, range.start, range.end);
    // Blobs first: an entry never reaches the cloud before the image it names.
    await sendBlobs(api, this.ctx.state, this.path, bytes, this.ctx.log);
    const uploadId = range.upload ? await api.upload(this.sessionId, bytes) : undefined;
    const write = (dictionary?: Uint8Array) =>
      api.write(this.sessionId, bytes, {
        offset: range.start,
        generation: generation > 0 && !options.replace ? generation : undefined,
        replace: options.replace,
        uploadId,
        dictionary,
      });
    if (uploadId || options.replace || range.start === 0) return write();
    try {
      return await write(readRange(this.path, Math.max(0, range.start - DICT_BYTES), range.start));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      // The committed bytes before the offset are not this file's: it diverged from the cloud.
      if (error.reason === "dictionary_mismatch") throw new Diverged(error.message);
      // A server without the dictionary encoding: plain gzip.
      if (error.reason === "unsupported_encoding") return write();
      throw error;
    }
  }

  async run(checkServer: boolean): Promise<SyncResult> {
    const { ctx } = this;
    let state = ctx.state.get(this.path);
    if (state && checkServer) {
      // On start: does the server still hold what the state says it confirmed?
      const cloud = await ctx.api.head(this.sessionId);
      if (!cloud || cloud.offset !== state.sent || cloud.generation !== state.generation) state = undefined;
    }
    // Does the file still continue what the server confirmed?
    const change = localChange(this.path, state, { sessionId: this.sessionId, complete: this.complete, ino: this.ino });
    if (!state || change) {
      const reconciled = await this.reconcile(change ?? "unknown");
      if (reconciled.behind) return { status: "behind", sessionId: this.sessionId, sent: reconciled.state.sent };
      state = reconciled.state;
    }
    const startedAt = state.sent;
    while (state.sent < this.complete) {
      const range = this.batch(state.sent);
      try {
        const answer = await this.send(range, state.generation);
        state = this.save({ sent: answer.offset, generation: answer.generation, lastError: undefined });
        ctx.onProgress?.(range.end - range.start);
        for (const problem of answer.problems) {
          ctx.log.event("problem", { path: this.path, sessionId: this.sessionId, message: problem.message });
        }
      } catch (error) {
        if (error instanceof Diverged) {
          state = await this.startGeneration("diverged");
          continue;
        }
        if (!(error instanceof ApiError) || error instanceof Unauthorized) throw error;
        if (error.status === 409 || error.status === 412 || error.status === 404) {
          const reconciled = await this.reconcile("conflict");
          if (reconciled.behind) return { status: "behind", sessionId: this.sessionId, sent: reconciled.state.sent };
          state = reconciled.state;
          continue;
        }
        // A request the server refuses as it is (400, 413): retrying would not help.
        this.save({ sent: state.sent, generation: state.generation, lastError: error.message });
        return { status: "skipped", reason: error.message };
      }
    }
    if (state.sent === startedAt) return { status: "idle", sessionId: this.sessionId, sent: state.sent };
    return {
      status: "synced",
      sessionId: this.sessionId,
      sent: state.sent,
      generation: state.generation,
      bytes: state.sent - startedAt,
    };
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
  }
  return result;
}
