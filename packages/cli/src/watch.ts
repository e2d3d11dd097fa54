/**
 * `pisync watch`: follows every session file under the roots with file-system events (a slow
 * poll only where events are unavailable, or while a root does not exist yet) and syncs each
 * file shortly after it changes: one sync at a time per file, a few files at once.
 *
 * Failures: when the server cannot be reached, the files wait while one cheap probe asks
 * whether it answers again, with backoff and jitter but never more than `MAX_PROBE_MS`
 * between two probes, so the files are sent again within seconds of its return. A file that
 * fails while the server answers is retried on its own with a longer backoff. A refused
 * token stops the watcher (`refused` says why).
 *
 * Merging: a file changes only when pi writes it, so the cloud is asked too, every
 * `cloudPollMs`, for its most recently changed sessions (one request): a session another
 * machine appended to (same generation, longer than this machine's state says) is synced at
 * once, which appends the other machine's lines to the file (see `sync.ts`). Another generation
 * is left alone until this file changes: two machines never answer each other's generations.
 */
import { type FSWatcher, readdirSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import type { StateStore } from "./state.js";
import { cloudAtOf, type SyncContext, syncFile, Transient, Unauthorized } from "./sync.js";

/** The longest wait between two probes of a server that does not answer. */
export const MAX_PROBE_MS = 4000;

export interface WatchOptions {
  roots: string[];
  /** Wait after an event before syncing (coalesces pi's bursts of lines). */
  debounceMs?: number;
  /** Files synced at once. */
  concurrency?: number;
  /** Poll interval where file-system events are unavailable. */
  pollMs?: number;
  /** How often the cloud is asked for sessions other machines appended to (0: never; default 15 s). */
  cloudPollMs?: number;
  /** Roots to follow as they appear (asked every `pollMs`): the default roots, which grow with omp's profiles. */
  discoverRoots?: () => string[];
  /**
   * Asks the server who it is (`GET /v1/whoami`): undefined when it is the server's data and
   * account the watcher confirmed with, else what is confirmed with the new one (nothing yet)
   * and what to log. Asked before every cloud poll (else every `identityPollMs`) and after
   * every outage.
   */
  rescope?: () => Promise<Rescoped | undefined>;
  /** How often the server's identity is asked when the cloud is not polled (default 60 s; 0: only after an outage). */
  identityPollMs?: number;
}

/** Another server's data or account at the watched address: what is confirmed there (nothing yet). */
export interface Rescoped {
  state: StateStore;
  /** For the log and the status file: the address, the server's id, the account. */
  fields: Record<string, unknown>;
}

/** The sessions asked for on each cloud poll: the most recently changed (the list's order). */
const CLOUD_POLL_SESSIONS = 100;

/** Every `.jsonl` file under a folder, recursively. */
export function sessionFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith(".jsonl")) found.push(path);
    }
  };
  walk(root);
  return found.sort();
}

interface FileTask {
  running: boolean;
  dirty: boolean;
  timer?: NodeJS.Timeout;
  failures: number;
  /** On start, a file's state is checked against the server (HEAD) once. */
  checkServer: boolean;
}

export class Watcher {
  private readonly tasks = new Map<string, FileTask>();
  private readonly watchers: FSWatcher[] = [];
  private readonly queue: string[] = [];
  private active = 0;
  private pollTimer?: NodeJS.Timeout;
  private cloudTimer?: NodeJS.Timeout;
  private identityTimer?: NodeJS.Timeout;
  /** The identity check under way (one at a time). */
  private rechecking?: Promise<void>;
  private stopped = false;
  /** Set while the server does not answer: files wait in `waiting` for the probe. */
  private offline = false;
  private probeTimer?: NodeJS.Timeout;
  private probeFailures = 0;
  private readonly waiting = new Set<string>();
  /** Of those, the files whose sync failed (the others only arrived while offline). */
  private readonly failed = new Set<string>();
  /** Why the watcher stopped on its own (the server refused the token); undefined otherwise. */
  refused?: string;
  /** Resolves when the watcher stops (`stop()`, or a refused token). */
  readonly done: Promise<void>;
  private finish!: () => void;

  constructor(
    private readonly ctx: SyncContext,
    private readonly options: WatchOptions,
  ) {
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  start(): void {
    // A refused token stops the watcher at once, even with nothing to send yet.
    this.ctx.api.verifyLogin().catch((error) => {
      if (error instanceof Unauthorized) this.refuse(error);
    });
    for (const root of this.options.roots) {
      if (!this.follow(root)) this.ctx.log.event("waiting", { root, reason: "no such folder yet" });
      for (const path of sessionFiles(root)) this.schedule(path, 0, true);
    }
    const every = this.options.cloudPollMs ?? 15_000;
    const polling = every > 0 && this.ctx.merge !== false;
    if (polling) this.scheduleCloudPoll(every);
    if (this.options.discoverRoots) this.startPolling();
    // Without cloud polls (which ask it first), the server's identity is asked on its own.
    const identityEvery = this.options.identityPollMs ?? 60_000;
    if (!polling && this.options.rescope && identityEvery > 0) this.scheduleIdentityCheck(identityEvery);
  }

  private scheduleIdentityCheck(every: number): void {
    if (this.stopped) return;
    this.identityTimer = setTimeout(async () => {
      if (!this.offline) await this.recheckIdentity();
      this.scheduleIdentityCheck(every);
    }, every);
    this.identityTimer.unref();
  }

  /**
   * Asks the server who it is; when its data or the account changed (a server started afresh
   * at the same address, another token), what was confirmed no longer counts: the log says so
   * and every file is looked at again, so what the new server lacks is sent.
   */
  recheckIdentity(): Promise<void> {
    this.rechecking ??= this.rescope().finally(() => {
      this.rechecking = undefined;
    });
    return this.rechecking;
  }

  private async rescope(): Promise<void> {
    let next: Rescoped | undefined;
    try {
      next = await this.options.rescope?.();
    } catch (error) {
      if (error instanceof Unauthorized) this.refuse(error);
      return; // unreachable: asked again after the outage
    }
    if (!next || this.stopped) return;
    this.ctx.state.flush();
    this.ctx.state = next.state;
    this.ctx.log.event("server-changed", next.fields);
    const files = new Set([...this.options.roots.flatMap((root) => sessionFiles(root)), ...this.tasks.keys()]);
    for (const path of files) this.schedule(path, 0, true);
  }

  /** Roots that appeared since the start (an omp profile made meanwhile): followed from now on. */
  private discover(): void {
    for (const root of this.options.discoverRoots?.() ?? []) {
      if (this.options.roots.includes(root)) continue;
      this.options.roots.push(root);
      this.ctx.log.event("watching", { root });
      if (this.follow(root)) for (const path of sessionFiles(root)) this.schedule(path, 0, true);
    }
  }

  private scheduleCloudPoll(every: number): void {
    if (this.stopped) return;
    this.cloudTimer = setTimeout(async () => {
      // An unanswered poll waits for the next: the files' own syncs handle outages.
      if (!this.offline) {
        // Who the server is first: the poll's answer only counts for the same server's data.
        await this.recheckIdentity();
        await this.pollCloud().catch(() => {});
      }
      this.scheduleCloudPoll(every);
    }, every);
    this.cloudTimer.unref();
  }

  /** Schedules the files whose session another machine appended to since this one last looked. */
  async pollCloud(): Promise<void> {
    const page = await this.ctx.api.json<{ sessions: { id: string; generation: number; bytes: number }[] }>(
      `/v1/sessions?limit=${CLOUD_POLL_SESSIONS}`,
    );
    const moved = new Map(page.sessions.map((s) => [s.id, s]));
    for (const [path, state] of Object.entries(this.ctx.state.all())) {
      const cloud = moved.get(state.sessionId);
      if (!cloud || !this.tasks.has(path)) continue;
      if (cloud.generation === state.generation && Number(cloud.bytes) > cloudAtOf(state)) this.schedule(path, 0, true);
    }
  }

  private readonly watched = new Set<string>();

  /**
   * Watches a root and the folders under it, one non-recursive watcher per folder (pi's layout
   * is `root/--<cwd>--/*.jsonl`: a few dozen folders, far lighter than a recursive watch that
   * tracks every file); a folder that appears is watched and scanned. Where that fails (no such
   * folder yet, no events), the root is polled.
   */
  private follow(root: string): boolean {
    if (this.watched.has(root)) return true;
    try {
      this.watchFolder(root, 0);
      this.watched.add(root);
      return true;
    } catch {
      this.startPolling();
      return false;
    }
  }

  private readonly folders = new Set<string>();

  private watchFolder(dir: string, depth: number): void {
    if (this.folders.has(dir) || depth > 4 || this.stopped) return;
    const watcher = watch(dir, (_event, name) => {
      if (!name) return;
      const path = join(dir, name.toString());
      if (path.endsWith(".jsonl")) this.schedule(path);
      else if (isFolder(path)) {
        this.watchFolder(path, depth + 1);
        for (const file of sessionFiles(path)) this.schedule(file);
      }
    });
    watcher.on("error", () => {
      this.folders.delete(dir);
      watcher.close();
    });
    this.watchers.push(watcher);
    this.folders.add(dir);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) this.watchFolder(join(dir, entry.name), depth + 1);
    }
  }

  private startPolling(): void {
    if (this.pollTimer || this.stopped) return;
    this.pollTimer = setInterval(() => {
      this.discover();
      for (const root of this.options.roots) {
        if (this.watched.has(root)) continue;
        // A root that appeared gets events from now on; one without them is rescanned.
        if (isFolder(root) && this.follow(root)) this.ctx.log.event("watching", { root });
        for (const path of sessionFiles(root)) this.schedule(path, 0, true);
      }
    }, this.options.pollMs ?? 5000);
    // Not unref'd: a watcher waiting for its roots to appear keeps the process alive.
  }

  schedule(path: string, delay = this.options.debounceMs ?? 100, checkServer = false): void {
    if (this.stopped) return;
    let task = this.tasks.get(path);
    if (!task) {
      task = { running: false, dirty: false, failures: 0, checkServer };
      this.tasks.set(path, task);
    } else if (checkServer) task.checkServer = true;
    if (task.running) {
      task.dirty = true;
      return;
    }
    if (task.timer) clearTimeout(task.timer);
    const t = task;
    task.timer = setTimeout(() => {
      t.timer = undefined;
      // While the server does not answer, a change waits for the probe.
      if (this.offline) this.waiting.add(path);
      else this.enqueue(path);
    }, delay);
  }

  private enqueue(path: string): void {
    if (!this.queue.includes(path)) this.queue.push(path);
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.active < (this.options.concurrency ?? 4) && this.queue.length > 0) {
      const path = this.queue.shift() as string;
      this.active++;
      this.run(path).finally(() => {
        this.active--;
        this.pump();
      });
    }
  }

  private async run(path: string): Promise<void> {
    const task = this.tasks.get(path) as FileTask;
    task.running = true;
    task.dirty = false;
    try {
      const result = await syncFile(path, this.ctx, { checkServer: task.checkServer });
      task.checkServer = false;
      task.failures = 0;
      if (result.status === "gone") this.tasks.delete(path);
      if (result.status === "skipped") this.ctx.log.event("skipped", { path, reason: result.reason });
    } catch (error) {
      if (error instanceof Unauthorized) {
        this.refuse(error);
        return;
      }
      const message = (error as Error).message;
      this.ctx.state.update(path, { lastError: message });
      task.running = false;
      if (error instanceof Transient) {
        // The server may be down: the file waits for the probe; nothing is dropped.
        this.waiting.add(path);
        this.failed.add(path);
        this.ctx.log.event("retry", { path, when: "the server answers", error: message });
        this.goOffline();
        return;
      }
      // Unexpected: try again later, backing off, with jitter.
      this.retryLater(path, task);
      return;
    }
    task.running = false;
    if (task.dirty) this.schedule(path);
  }

  private refuse(error: Unauthorized): void {
    if (this.stopped) return;
    this.refused = error.message;
    this.ctx.log.event("error", { message: error.message });
    this.stop();
  }

  /** A file that failed while the server answers: on its own, up to 5 minutes apart. */
  private retryLater(path: string, task: FileTask): void {
    task.failures++;
    const delay = Math.min(300_000, 1000 * 2 ** Math.min(task.failures, 9)) * (0.5 + Math.random() / 2);
    this.ctx.log.event("retry", { path, in: `${Math.round(delay / 1000)}s` });
    this.schedule(path, delay);
  }

  private goOffline(): void {
    if (this.offline || this.stopped) return;
    this.offline = true;
    this.probeFailures = 0;
    this.scheduleProbe(true);
  }

  /** The next probe: 0.5 s, 1 s, 2 s, then every 2–4 s (jittered) until the server answers. */
  private scheduleProbe(first = false): void {
    let delay = 0;
    if (!first) {
      delay = Math.round(Math.min(MAX_PROBE_MS, 500 * 2 ** (this.probeFailures - 1)) * (0.5 + Math.random() / 2));
      this.ctx.log.event("probe", { inMs: delay });
    }
    this.probeTimer = setTimeout(async () => {
      this.probeTimer = undefined;
      const up = await this.ctx.api.probe();
      if (this.stopped) return;
      if (!up) {
        if (this.probeFailures++ === 0) this.ctx.log.event("offline", { endpoint: this.ctx.api.login.endpoint });
        this.scheduleProbe();
        return;
      }
      const outage = this.probeFailures > 0;
      if (outage) this.ctx.log.event("online", { endpoint: this.ctx.api.login.endpoint, files: this.waiting.size });
      // Back after an outage: the same server's data, or one started afresh at this address?
      if (outage) await this.recheckIdentity();
      if (this.stopped) return;
      this.offline = false;
      const files = [...this.waiting];
      const failed = new Set(this.failed);
      this.waiting.clear();
      this.failed.clear();
      for (const path of files) {
        const task = this.tasks.get(path);
        if (!task) continue;
        // The server answered all along: a file that failed fails on its own, and backs off.
        if (!outage && failed.has(path)) this.retryLater(path, task);
        // After an outage: at once, spread over a second.
        else this.schedule(path, outage ? Math.random() * 1000 : 0);
      }
    }, delay);
  }

  /** Files with a sync queued, running or waiting to retry. */
  pending(): number {
    let n = this.queue.length + this.waiting.size;
    for (const task of this.tasks.values()) if (task.running || task.timer) n++;
    return n;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const watcher of this.watchers) watcher.close();
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.cloudTimer) clearTimeout(this.cloudTimer);
    if (this.identityTimer) clearTimeout(this.identityTimer);
    if (this.probeTimer) clearTimeout(this.probeTimer);
    for (const task of this.tasks.values()) if (task.timer) clearTimeout(task.timer);
    this.ctx.state.flush();
    this.finish();
  }
}

/** Whether a path exists and is a folder. */
export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
