/**
 * `pisync watch`: follows every session file under the roots with file-system events (a slow
 * poll only where events are unavailable) and syncs each file shortly after it changes: one
 * sync at a time per file, a few files at once, failures retried with backoff and jitter.
 */
import { type FSWatcher, readdirSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import { type SyncContext, syncFile, Transient, Unauthorized } from "./sync.js";

export interface WatchOptions {
  roots: string[];
  /** Wait after an event before syncing (coalesces pi's bursts of lines). */
  debounceMs?: number;
  /** Files synced at once. */
  concurrency?: number;
  /** Poll interval where file-system events are unavailable. */
  pollMs?: number;
}

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
  private stopped = false;
  /** Resolves when the watcher stops for good (a refused token). */
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
    for (const root of this.options.roots) {
      this.follow(root);
      for (const path of sessionFiles(root)) this.schedule(path, 0, true);
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
      for (const root of this.options.roots) {
        if (this.watched.has(root)) continue;
        // A root that appeared gets events from now on; one without them is rescanned.
        if (isFolder(root)) this.follow(root);
        for (const path of sessionFiles(root)) this.schedule(path, 0);
      }
    }, this.options.pollMs ?? 5000);
    this.pollTimer.unref();
  }

  schedule(path: string, delay = this.options.debounceMs ?? 100, checkServer = false): void {
    if (this.stopped) return;
    let task = this.tasks.get(path);
    if (!task) {
      task = { running: false, dirty: false, failures: 0, checkServer };
      this.tasks.set(path, task);
    }
    if (task.running) {
      task.dirty = true;
      return;
    }
    if (task.timer) clearTimeout(task.timer);
    const t = task;
    task.timer = setTimeout(() => {
      t.timer = undefined;
      this.enqueue(path);
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
        this.ctx.log.event("error", { message: `the server refused the token (${error.message}): run pisync login` });
        this.stop();
        return;
      }
      // Transient or unexpected: try again later, backing off, with jitter; nothing is dropped.
      task.failures++;
      const delay = Math.min(300_000, 1000 * 2 ** Math.min(task.failures, 9)) * (0.5 + Math.random() / 2);
      const message = error instanceof Transient ? error.message : (error as Error).message;
      this.ctx.state.update(path, { lastError: message });
      this.ctx.log.event("retry", { path, in: `${Math.round(delay / 1000)}s`, error: message });
      task.running = false;
      this.schedule(path, delay);
      return;
    }
    task.running = false;
    if (task.dirty) this.schedule(path);
  }

  /** Files with a sync queued, running or waiting to retry. */
  pending(): number {
    let n = this.queue.length;
    for (const task of this.tasks.values()) if (task.running || task.timer) n++;
    return n;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const watcher of this.watchers) watcher.close();
    if (this.pollTimer) clearInterval(this.pollTimer);
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
