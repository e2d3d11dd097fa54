/**
 * A child process the fault suite can pause (SIGSTOP), resume (SIGCONT), kill (SIGKILL) and
 * start again on the same port and data. Each runs in its own process group, so a signal
 * reaches everything it started; its output is appended to a log file beside its data.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { waitForHttp } from "@pisync/testing/servers";

/** How to start one process and how to know it is ready. */
export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Where its stdout and stderr are appended (across restarts). */
  logFile: string;
  /** Resolves once the process serves; rejects if it does not within its own deadline. */
  ready(child: ChildProcess): Promise<void>;
}

/** Every process group started here, killed when this process exits however it exits. */
const live = new Set<number>();
process.once("exit", () => {
  for (const pid of live) signalGroup(pid, "SIGKILL");
});

function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** A restartable child process (see the module's comment). */
export class Restartable {
  private child: ChildProcess | undefined;
  private log: WriteStream;
  /** Whether it is stopped by SIGSTOP now. */
  paused = false;

  constructor(readonly spec: ProcessSpec) {
    this.log = createWriteStream(spec.logFile, { flags: "a" });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts it and waits until it is ready; answers the milliseconds that took. */
  async start(): Promise<number> {
    if (this.running) throw new Error(`${this.spec.name} is already running`);
    const started = Date.now();
    this.log.write(`--- ${new Date().toISOString()} start ${this.spec.name}\n`);
    const child = spawn(this.spec.command, this.spec.args, {
      cwd: this.spec.cwd,
      env: this.spec.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.child = child;
    this.paused = false;
    const pid = child.pid as number;
    live.add(pid);
    child.once("exit", () => live.delete(pid));
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    await this.spec.ready(child);
    return Date.now() - started;
  }

  /** SIGSTOP: the process keeps its sockets but answers nothing. */
  pause(): void {
    if (this.child?.pid && signalGroup(this.child.pid, "SIGSTOP")) this.paused = true;
  }

  /** SIGCONT after {@link pause}. */
  resume(): void {
    if (this.child?.pid) signalGroup(this.child.pid, "SIGCONT");
    this.paused = false;
  }

  /** SIGKILL, as a crash or an out-of-memory kill: nothing is flushed. Waits until it is gone. */
  async kill(): Promise<void> {
    await this.signalAndWait("SIGKILL");
  }

  /** SIGTERM (SIGKILL after 5 s): the end of a run. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child?.pid || !this.running) return;
    if (this.paused) this.resume();
    const timer = setTimeout(() => signalGroup(child.pid as number, "SIGKILL"), 5000);
    await this.signalAndWait("SIGTERM");
    clearTimeout(timer);
  }

  /** Closes its log (after the last stop). */
  close(): void {
    this.log.end();
  }

  private async signalAndWait(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child?.pid || !this.running) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    signalGroup(child.pid, signal);
    await exited;
    // The group's other members (none expected) go with it.
    signalGroup(child.pid, "SIGKILL");
    this.paused = false;
  }
}

/** Resolves once `url` answers (any HTTP status); rejects once `child` exits or after `timeoutMs`. */
export async function untilResponds(url: string, child: ChildProcess, what: string, timeoutMs = 60_000): Promise<void> {
  const exited = new AbortController();
  const onExit = () => exited.abort();
  child.once("exit", onExit);
  if (child.exitCode !== null || child.signalCode !== null) exited.abort();
  try {
    await waitForHttp(url, what, exited.signal, timeoutMs);
  } finally {
    child.off("exit", onExit);
  }
  if (exited.signal.aborted) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode})`);
}
