/** `insights`: where tokens, money and model time went, over every machine's sessions. */
import type { InsightsReport } from "@pisync/protocol";
import * as z from "zod/mini";
import { ApiError } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { safeJson, sanitize } from "../sanitize.js";
import { api, type CommandHelp, type Io, parse } from "./common.js";
import { teamId } from "./team.js";

const INSIGHTS_HELP: CommandHelp = {
  usage: "pisync insights [--since 30d] [--by model|project|machine|member|tool|day|week] [--team TEAM] [--json]",
  args: [],
  help: `Tokens, cost and model time of your sessions in the cloud (every machine's), from pi's own
accounting: the totals, then one table grouped by --by (default model), most costly first
(days and weeks: oldest first).

  --since SPAN   30d (default), 12w, a day (2026-01-31): from then to today, UTC; or all:
                 from your first day of usage (a span over a year starts at the first
                 day with usage; the first line says which days were counted)
  --by GROUP     model, project, machine, member (with --team), tool, day or week
  --team TEAM    a team's usage instead (its sessions, every member's; its id or name): its
                 owner and admins see the split by member (--by member)
  --json         one JSON document: the server's whole report

examples:
  pisync insights
  pisync insights --since 7d --by day
  pisync insights --since all --by week
  pisync insights --by project --json | jq '.byProject[0]'`,
};

const BY = ["model", "project", "machine", "member", "tool", "day", "week"] as const;
const Args = z.object({
  since: z.optional(
    z.string().check(z.regex(/^(all|\d{1,4}[dw]|\d{4}-\d{2}-\d{2})$/, "all, 30d, 12w or a day like 2026-01-31")),
  ),
  by: z.optional(z.enum(BY, `one of ${BY.join(", ")}`)),
  team: z.optional(z.string().check(z.minLength(1, "a team's id or name, e.g. --team acme"))),
  json: z.optional(z.boolean()),
  positionals: z.tuple([]),
});

/** `format(n)`, or "—" for what is not a finite number (a server's sum may be null). */
const shown = (n: number, format: (n: number) => string) =>
  typeof n === "number" && Number.isFinite(n) ? format(n) : "—";
const money = (cost: number) => shown(cost, (c) => `$${c.toFixed(2)}`);
const tokens = (n: number) =>
  shown(n, (v) =>
    v >= 1e6 ? `${(v / 1e6).toFixed(1)}M` : v >= 1e3 ? `${(v / 1e3).toFixed(1)}k` : String(Math.round(v)),
  );
const minutes = (ms: number) => shown(ms, (v) => `${(v / 60_000).toFixed(1)} min`);

/** Rows of `--by` as [name, columns...], the header first. */
function table(report: InsightsReport, by: (typeof BY)[number]): string[][] {
  if (by === "tool") {
    return [
      ["tool", "calls", "result time", "sessions"],
      ...report.byTool.map((t) => [t.tool, String(t.calls), minutes(t.ms), String(t.sessions)]),
    ];
  }
  const groups = {
    model: report.byModel,
    project: report.byProject,
    machine: report.byDevice,
    member: report.byMember ?? [],
    day: report.byDay,
    week: report.byWeek,
  }[by];
  return [
    [by, "cost", "tokens", "model time", "turns", "sessions"],
    ...groups.map((g) => [
      g.label,
      money(g.cost),
      tokens(g.tokens),
      minutes(g.ms),
      String(g.turns),
      String(g.sessions),
    ]),
  ];
}

/** What a `--since` asked for, in words: `all time`, `last 30 days`, `since 2026-01-31`. */
function rangeLabel(since: string): string {
  if (since === "all") return "all time";
  const relative = /^(\d+)([dw])$/.exec(since);
  if (!relative) return `since ${since}`;
  const n = Number(relative[1]);
  return `last ${n} ${relative[2] === "w" ? (n === 1 ? "week" : "weeks") : n === 1 ? "day" : "days"}`;
}

/** Prints the user's usage report. A range the server refuses is a usage error (exit 2). */
export async function insights(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { since: { type: "string" }, by: { type: "string" }, team: { type: "string" }, json: { type: "boolean" } },
    Args,
    INSIGHTS_HELP,
  );
  if (args.by === "member" && args.team === undefined) {
    throw new CliError(`pisync insights: --by member needs --team\nusage: ${INSIGHTS_HELP.usage}`, EXIT.usage);
  }
  let report: InsightsReport;
  const client = api(io);
  const team = args.team === undefined ? "" : `&team=${encodeURIComponent(await teamId(client, args.team))}`;
  try {
    report = await client.json<InsightsReport>(`/v1/insights?since=${encodeURIComponent(args.since ?? "30d")}${team}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) {
      throw new CliError(`pisync insights: ${error.message}\nusage: ${INSIGHTS_HELP.usage}`, EXIT.usage);
    }
    throw error;
  }
  if (args.json) {
    io.out(`${safeJson(report, 2)}\n`);
    return EXIT.ok;
  }
  const t = report.totals;
  io.out(
    `${sanitize(`${rangeLabel(args.since ?? "30d")} (${report.from} to ${report.to}, UTC): ${money(t.cost)}, ${tokens(t.tokens)} tokens, ${minutes(t.ms)} of model time, ${t.turns} turns in ${t.sessions} sessions`)}\n`,
  );
  if (report.uncounted > 0)
    io.out(`(${report.uncounted} sessions backed up before insights were kept are not counted)\n`);
  if (args.by === "member" && !report.byMember) io.err("the split by member is for the team's owner and admins\n");
  const rows = table(report, args.by ?? "model").map((row) => row.map((cell) => sanitize(cell)));
  const widths = rows[0]?.map((_, i) => Math.min(60, Math.max(...rows.map((r) => (r[i] ?? "").length)))) ?? [];
  for (const row of rows) {
    io.out(
      `${row.map((cell, i) => (i === 0 ? cell.slice(0, 60).padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ")}\n`,
    );
  }
  return EXIT.ok;
}
