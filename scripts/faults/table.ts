/** The report as a Markdown table: answers by class, bytes lost, orphans, insights' usage, restart-to-healthy time. */
import type { FaultReport } from "./run.js";

const cell = (n: number | undefined) => String(n ?? 0);

/** One row per fault and pair, then one per pair's end (after `npm run verify -- --repair`). */
export function formatTable(report: FaultReport): string {
  const head = [
    "pair",
    "fault",
    "2xx",
    "409",
    "429/503/507 +Retry-After",
    "500",
    "5xx no Retry-After",
    "no answer",
    "slowest answer",
    "bytes lost",
    "unreadable",
    "torn/dup lines",
    "orphans",
    "temp files",
    "usage by day wrong",
    "healthy after",
  ];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const row of report.rows) {
    const a = row.answers;
    lines.push(
      `| ${[
        row.pair,
        row.fault,
        cell(a["2xx"]),
        cell(a["409"]),
        `${cell(a["429+RA"])}/${cell(a["503+RA"])}/${cell(a["507+RA"])}`,
        cell(a["500"]),
        cell(a["5xx-noRA"]),
        cell(a.lost),
        `${(row.slowestMs / 1000).toFixed(1)} s`,
        cell(row.checks.bytesLost),
        cell(row.checks.unreadable),
        `${row.checks.tornLines}/${row.checks.duplicatedLines}`,
        cell(row.inventory.orphans),
        cell(row.inventory.tempFiles),
        cell(row.inventory.usageWrong),
        row.healthyMs === null ? "never" : `${(row.healthyMs / 1000).toFixed(1)} s`,
      ].join(" | ")} |`,
    );
  }
  for (const end of report.ends) {
    const verify = end.repair
      ? `verify --repair exit ${end.repair.exitCode}, verify exit ${end.verify?.exitCode}`
      : "no npm run verify";
    lines.push(
      `| ${end.pair} | end (${verify}) | | | | | | | | | | | ${end.inventory.orphans} | ${end.inventory.tempFiles} | ${end.inventory.usageWrong} | |`,
    );
  }
  return lines.join("\n");
}

/** What else a reader of the table needs: the failures by code, the proxy's counts, the anomalies. */
export function formatNotes(report: FaultReport): string {
  const notes: string[] = [];
  for (const row of report.rows) {
    const failures = Object.entries(row.failures);
    if (failures.length) {
      notes.push(`${row.pair} / ${row.fault}: ${failures.map(([answer, n]) => `${n}× ${answer}`).join(", ")}`);
    }
    for (const problem of row.checks.problems.slice(0, 5)) notes.push(`${row.pair} / ${row.fault}: ${problem}`);
  }
  for (const end of report.ends) {
    notes.push(`${end.pair}: ${JSON.stringify(end.figures)}`);
    for (const anomaly of end.anomalies.slice(0, 10)) notes.push(`${end.pair}: ${anomaly}`);
  }
  return notes.map((n) => `- ${n}`).join("\n");
}
