/**
 * The suite's checks over a report, one sentence per failed check: what the test asserts
 * empty and `npm run faults` exits non-zero on.
 */
import type { FaultReport } from "./run.js";

/** Every check the report fails, as `pair / fault: what`. */
export function failedChecks(report: FaultReport): string[] {
  const failed: string[] = [];
  for (const row of report.rows) {
    const at = `${row.pair} / ${row.fault}`;
    const { checks } = row;
    if (checks.bytesLost) failed.push(`${at}: ${checks.bytesLost} acknowledged bytes lost`);
    if (checks.unreadable) failed.push(`${at}: ${checks.unreadable} unreadable sessions`);
    if (checks.tornLines) failed.push(`${at}: ${checks.tornLines} torn lines`);
    if (checks.duplicatedLines) failed.push(`${at}: ${checks.duplicatedLines} duplicated lines`);
    if (checks.unacknowledgedBytes) failed.push(`${at}: ${checks.unacknowledgedBytes} stored bytes never acknowledged`);
    if (checks.broken) {
      failed.push(`${at}: ${checks.broken} sessions the writers had to stop writing (${checks.problems[0] ?? ""})`);
    }
    if (row.badFailures) {
      const which = Object.entries(row.failures)
        .filter(([answer]) => answer.startsWith("5"))
        .map(([answer, n]) => `${n}× ${answer}`)
        .join(", ");
      failed.push(`${at}: ${row.badFailures} failed requests were not a 503/507 with Retry-After (${which})`);
    }
    if (row.healthyMs === null) failed.push(`${at}: no append was acknowledged after the recovery`);
    if (row.stuckWriters) failed.push(`${at}: ${row.stuckWriters} writers still waiting on an append at the checks`);
    if (row.inventory.missing) failed.push(`${at}: heads name ${row.inventory.missing} missing objects`);
    if (row.inventory.usageWrong)
      failed.push(`${at}: ${row.inventory.usageWrong} sessions' usage by day differs from their heads`);
  }
  for (const end of report.ends) {
    const at = `${end.pair} / end`;
    if (!end.repair) failed.push(`${at}: npm run verify -- --repair is not in this repository`);
    else if (end.verify?.exitCode !== 0) {
      failed.push(`${at}: npm run verify after --repair exited ${end.verify?.exitCode}: ${end.verify?.output}`);
    }
    if (end.inventory.orphans) failed.push(`${at}: ${end.inventory.orphans} unreferenced objects`);
    if (end.inventory.tempFiles) failed.push(`${at}: ${end.inventory.tempFiles} temp files`);
    if (end.inventory.missing) failed.push(`${at}: heads name ${end.inventory.missing} missing objects`);
    if (end.inventory.usageWrong)
      failed.push(`${at}: ${end.inventory.usageWrong} sessions' usage by day differs from their heads`);
  }
  return failed;
}
