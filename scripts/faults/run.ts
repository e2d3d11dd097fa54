/**
 * The fault suite: on each store pair, writers append while faults strike in sequence; after
 * every fault the writers pause and the checks read every session and the stores; at the end
 * `npm run verify -- --repair` (when it exists) runs and the stores are read again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkSessions, type SessionChecks } from "./checks.js";
import type { Inventory } from "./inventory.js";
import type { ResponseClass } from "./responses.js";
import type { Fault, FaultSize, Rig } from "./rig.js";
import { awsRig } from "./rig-aws.js";
import { embeddedRig } from "./rig-embedded.js";
import type { VerifyRun } from "./verify.js";
import { Writers } from "./writers.js";

export type PairName = "embedded" | "aws";

/** One row of the table: a fault on a pair, and what the checks found after it. */
export interface FaultRow {
  pair: PairName;
  fault: string;
  answers: Partial<Record<ResponseClass, number>>;
  /** Failed answers by status and code (`500 internal`: 3). */
  failures: Record<string, number>;
  /** 500s and 5xx without Retry-After. */
  badFailures: number;
  /** The longest an append waited for its answer, in ms. */
  slowestMs: number;
  /** Milliseconds from the recovery (SIGCONT, restart, space freed) to the first acknowledged append; null: none came. */
  healthyMs: number | null;
  /** Writers still waiting on an append when the checks began. */
  stuckWriters: number;
  checks: SessionChecks;
  inventory: Inventory;
}

export interface PairEnd {
  pair: PairName;
  /** `npm run verify -- --repair`, then `npm run verify` (undefined: not in this repository yet). */
  repair?: VerifyRun;
  verify?: VerifyRun;
  /** The stores after the repair. */
  inventory: Inventory;
  figures: Record<string, number>;
  anomalies: string[];
}

export interface FaultReport {
  startedAt: string;
  durationMs: number;
  size: FaultSize;
  rows: FaultRow[];
  ends: PairEnd[];
}

export interface RunOptions {
  size: FaultSize;
  pairs: readonly PairName[];
  seed?: number;
  /** Both pairs at once (their processes are apart; a run takes as long as the slower). */
  parallel?: boolean;
  /** Keep the run's folder (data and logs) instead of removing it. */
  keep?: boolean;
  log?: (line: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The writers alone (and, on AWS, the dropping proxy, which runs throughout). */
const STEADY: Fault = { name: "steady", inject: async () => Date.now() };

async function runPair(name: PairName, options: RunOptions, rows: FaultRow[]): Promise<PairEnd> {
  const { size } = options;
  const log = options.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), `pisync-faults-${name}-`));
  log(`${name}: in ${dir}`);
  let rig: Rig | undefined;
  let writers: Writers | undefined;
  try {
    rig = name === "aws" ? await awsRig(dir, size) : await embeddedRig(dir, size);
    await rig.start();
    const { app } = rig;
    writers = new Writers({
      url: app.url,
      token: app.token(),
      writers: size.writers,
      thinkMs: size.thinkMs,
      sharedShare: 0.2,
      requestTimeoutMs: size.requestTimeoutMs,
      maxRetryAfterMs: size.maxRetryAfterMs,
      giveUpMs: size.giveUpMs,
      giveUpOnErrorsMs: size.giveUpOnErrorsMs,
      seed: options.seed ?? 1,
    });
    await writers.start();
    const ids = () => (writers as Writers).sessions.map((s) => s.id);
    for (const fault of [STEADY, ...rig.faults]) {
      writers.phase();
      log(`${name}: ${fault.name}`);
      const recovering = await fault.inject({ app, writers, size });
      const healthy = await writers.firstAckAfter(recovering, size.healthyTimeoutMs);
      await sleep(size.phaseMs);
      const stuckWriters = await writers.pause(size.giveUpMs + 5000);
      const checks = await checkSessions(app.url, app.token(), writers.sessions, size.healthyTimeoutMs);
      const row: FaultRow = {
        pair: name,
        fault: fault.name,
        answers: writers.answers.toJSON(),
        failures: Object.fromEntries(writers.answers.failures),
        badFailures: writers.answers.badFailures,
        slowestMs: writers.answers.slowestMs,
        healthyMs: healthy ?? null,
        stuckWriters,
        checks,
        inventory: await rig.inventory(ids()),
      };
      rows.push(row);
      log(`${name}: ${fault.name}: ${JSON.stringify({ answers: row.answers, lost: checks.bytesLost, healthy })}`);
      writers.resume();
    }
    await writers.stop();
    const repair = await rig.verify(true);
    const verify = repair.available ? await rig.verify(false) : undefined;
    return {
      pair: name,
      repair: repair.available ? repair : undefined,
      verify,
      inventory: await rig.inventory(ids()),
      figures: rig.figures(),
      anomalies: writers.anomalies,
    };
  } finally {
    await writers?.stop().catch(() => {});
    await rig?.close().catch((error: Error) => log(`${name}: close failed: ${error.message}`));
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the suite on `options.pairs`, one after the other (or at once). */
export async function runFaults(options: RunOptions): Promise<FaultReport> {
  const started = Date.now();
  const rows: FaultRow[] = [];
  const ends: PairEnd[] = [];
  if (options.parallel) ends.push(...(await Promise.all(options.pairs.map((pair) => runPair(pair, options, rows)))));
  else for (const pair of options.pairs) ends.push(await runPair(pair, options, rows));
  const order = (row: FaultRow) => options.pairs.indexOf(row.pair);
  return {
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    size: options.size,
    rows: rows.sort((a, b) => order(a) - order(b)),
    ends,
  };
}
