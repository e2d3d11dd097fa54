/**
 * A store pair set up for the fault suite: its app (and storage servers) as processes, the
 * faults it takes in order, and how to read its stores directly.
 */
import type { AppProcess } from "./app.js";
import type { Inventory } from "./inventory.js";
import type { VerifyRun } from "./verify.js";
import type { Writers } from "./writers.js";

/** The sizes of a run. */
export interface FaultSize {
  writers: number;
  /** How long writers write after each fault (once healthy) before the checks. */
  phaseMs: number;
  /** How long a SIGSTOP lasts. */
  stopMs: number;
  appKills: number;
  /** Share of DynamoDB transactions whose answer the proxy loses after they were applied. */
  dropRate: number;
  /** The embedded store's disk. */
  diskMb: number;
  thinkMs: number;
  requestTimeoutMs: number;
  maxRetryAfterMs: number;
  /** An append's retries end after this long (longer than any restart), or after `giveUpOnErrorsMs` of 500s only. */
  giveUpMs: number;
  giveUpOnErrorsMs: number;
  /** Longest wait for the first acknowledged append after a fault. */
  healthyTimeoutMs: number;
}

/** `npm run faults` (20 writers, 10 s stops) and the test's small run. */
export const SIZES = {
  full: {
    writers: 20,
    phaseMs: 8000,
    stopMs: 10_000,
    appKills: 3,
    dropRate: 0.1,
    diskMb: 64,
    thinkMs: 400,
    requestTimeoutMs: 30_000,
    maxRetryAfterMs: 5000,
    giveUpMs: 120_000,
    giveUpOnErrorsMs: 30_000,
    healthyTimeoutMs: 120_000,
  },
  small: {
    writers: 4,
    phaseMs: 1000,
    stopMs: 2000,
    appKills: 3,
    dropRate: 0.1,
    diskMb: 24,
    thinkMs: 100,
    requestTimeoutMs: 20_000,
    maxRetryAfterMs: 2000,
    giveUpMs: 90_000,
    giveUpOnErrorsMs: 20_000,
    healthyTimeoutMs: 90_000,
  },
} satisfies Record<string, FaultSize>;

/** What a fault gets to act on. */
export interface FaultContext {
  app: AppProcess;
  writers: Writers;
  size: FaultSize;
}

/** One fault: injects it and recovers; answers when recovery began (ms since the epoch). */
export interface Fault {
  name: string;
  inject(context: FaultContext): Promise<number>;
}

export interface Rig {
  name: "embedded" | "aws";
  app: AppProcess;
  faults: Fault[];
  /** Starts the storage servers (if any) and the app. */
  start(): Promise<void>;
  /** Orphans, missing objects and temp files of the sessions. */
  inventory(sessionIds: readonly string[]): Promise<Inventory>;
  /** `npm run verify [-- --repair]` on this pair's stores. */
  verify(repair: boolean): Promise<VerifyRun>;
  /** Extra figures of the pair (the proxy's counts). */
  figures(): Record<string, number>;
  /** Stops every process and removes what the run wrote (unless kept). */
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGKILL of the app while an append is in flight, then a restart on the same port and data. */
export function appKill(n: number): Fault {
  return {
    name: `app SIGKILL #${n}`,
    async inject({ app, writers }) {
      for (let i = 0; i < 250 && writers.inFlight === 0; i++) await sleep(20);
      await app.kill();
      const recovering = Date.now();
      await app.start();
      return recovering;
    },
  };
}
