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

it("every acknowledged byte survives every fault, on both store pairs", { timeout: 900_000 }, async () => {
  const report = await runFaults({ size: SIZES.small, pairs: ["embedded", "aws"], parallel: true });
  const failed = failedChecks(report);
  // The table and the failures are the message when a check fails.
  expect(failed, `${formatTable(report)}\n\n${formatNotes(report)}`).toEqual([]);
  // The run did what it says: every pair took its faults and its writers were acknowledged.
  for (const pair of ["embedded", "aws"] as const) {
    const rows = report.rows.filter((row) => row.pair === pair);
    expect(rows.filter((row) => row.fault.startsWith("app SIGKILL"))).toHaveLength(3);
    expect(rows.every((row) => (row.answers["2xx"] ?? 0) > 0)).toBe(true);
  }
});
