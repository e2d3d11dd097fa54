/**
 * The fault suite at its small size on both store pairs (each against its own real servers,
 * as separate processes): no fault may lose, lock or hide an acknowledged byte, and every
 * failed request must say what it is (503/507 with Retry-After).
 */
import { expect, it } from "vitest";
import { SIZES } from "./rig.js";
import { runFaults } from "./run.js";
import { formatNotes, formatTable } from "./table.js";
import { failedChecks } from "./verdict.js";

const KILLS = ["app SIGKILL #1", "app SIGKILL #2", "app SIGKILL #3"];
/** Each pair's faults, in order (the full disk is an injected ENOSPC when no tmpfs can be mounted). */
const FAULTS = {
  embedded: ["steady", ...KILLS, expect.stringMatching(/^full disk/)],
  aws: [
    "steady",
    "DynamoDB Local SIGSTOP/SIGCONT",
    "DynamoDB Local SIGKILL+restart",
    "s3rver SIGSTOP/SIGCONT",
    "s3rver SIGKILL+restart",
    ...KILLS,
  ],
};

it("every acknowledged byte survives every fault, on both store pairs", { timeout: 900_000 }, async () => {
  const report = await runFaults({ size: SIZES.small, pairs: ["embedded", "aws"], parallel: true });
  const failed = failedChecks(report);
  // The table and the failures are the message when a check fails.
  expect(failed, `${formatTable(report)}\n\n${formatNotes(report)}`).toEqual([]);
  // The run did what it says: every pair took each of its faults and its writers were acknowledged.
  for (const pair of ["embedded", "aws"] as const) {
    const rows = report.rows.filter((row) => row.pair === pair);
    expect(rows.map((row) => row.fault)).toEqual(FAULTS[pair]);
    expect(rows.every((row) => (row.answers["2xx"] ?? 0) > 0)).toBe(true);
  }
  // The full disk was met (507s), and the proxy lost answers after DynamoDB applied them.
  expect(report.rows.find((row) => row.fault.startsWith("full disk"))?.answers["507+RA"]).toBeGreaterThan(0);
  expect(report.ends.find((end) => end.pair === "aws")?.figures.droppedAfterApply).toBeGreaterThan(0);
});
