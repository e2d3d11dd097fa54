/**
 * What the watcher last did, in a small file beside the state (`watch-status.json`), so that
 * `pisync service status` can say whether it runs and what it did last without reading a log.
 * Written atomically, at most once a second (events come one per append), and when it stops.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeAtomic } from "./files.js";
import type { Logger } from "./log.js";
import { type Env, stateDir } from "./paths.js";

/** One event as the status file keeps it. */
export interface StatusEvent {
  time: string;
  event: string;
  fields: Record<string, unknown>;
}

/** The watcher's status file. */
export interface WatchStatus {
  pid: number;
  startedAt: string;
  endpoint: string;
  roots: string[];
  /** The last event of any kind. */
  last?: StatusEvent;
  /** The last file sent (`synced`). */
  lastSynced?: StatusEvent;
  /** The last failure (`error`, `retry`, `offline`). */
  lastError?: StatusEvent;
  /** The last time the server at the address turned out to be another server's data or account (`server-changed`). */
  serverChanged?: StatusEvent;
  /** Set when the watcher ended, with its exit code. */
  stoppedAt?: string;
  exitCode?: number;
}

const ERRORS = new Set(["error", "retry", "offline"]);
const WRITE_EVERY_MS = 1000;

export function watchStatusPath(env: Env = process.env): string {
  return join(stateDir(env), "watch-status.json");
}

/** The status file, or undefined when no watcher ever wrote one (or it is unreadable). */
export function readWatchStatus(env: Env = process.env): WatchStatus | undefined {
  try {
    return JSON.parse(readFileSync(watchStatusPath(env), "utf8")) as WatchStatus;
  } catch {
    return undefined;
  }
}

/** Whether the process `pid` is alive (a signal 0 reaches it). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A logger that passes every event on to `inner` and keeps the status file up to date;
 * `stop(code)` writes the final state.
 */
export function statusLogger(
  inner: Logger,
  start: Pick<WatchStatus, "endpoint" | "roots">,
  env: Env = process.env,
): Logger & { stop(code: number): void } {
  const path = watchStatusPath(env);
  const status: WatchStatus = { pid: process.pid, startedAt: new Date().toISOString(), ...start };
  let timer: NodeJS.Timeout | undefined;
  let lastWrite = 0;
  const write = () => {
    timer = undefined;
    lastWrite = Date.now();
    try {
      writeAtomic(path, `${JSON.stringify(status, null, 2)}\n`, 0o600);
    } catch {
      // A status file that cannot be written must never stop the backup.
    }
  };
  write();
  return {
    event(type, fields) {
      inner.event(type, fields);
      const event = { time: new Date().toISOString(), event: type, fields };
      status.last = event;
      if (type === "synced") status.lastSynced = event;
      if (ERRORS.has(type)) status.lastError = event;
      if (type === "server-changed") status.serverChanged = event;
      if (timer) return;
      const wait = lastWrite + WRITE_EVERY_MS - Date.now();
      if (wait <= 0) write();
      else timer = setTimeout(write, wait).unref() as NodeJS.Timeout;
    },
    stop(code) {
      if (timer) clearTimeout(timer);
      status.stoppedAt = new Date().toISOString();
      status.exitCode = code;
      write();
    },
  };
}
