/**
 * The insights page (`/insights`) and its CSV: where the owner's tokens, money and model time
 * went, by day or week, model, project, machine and tool, with the sessions that cost most.
 * Charts are SVG drawn here (no script, no third-party request; colours from the stylesheet,
 * so dark mode follows), each with its numbers in a table beside it. Every name is session
 * text or a device name: escaped here.
 */
import { escapeHtml } from "../escape.js";
import { NO_NUMBER } from "../numbers.js";
import { count, dollars, oneLine, query } from "./format.js";
import { type LibraryChrome, renderLibraryPage } from "./layout.js";

/** Summed usage. `tokens` is input + output + cache reads + cache writes, as pi counts them. */
export interface InsightsSums {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  tokens: number;
  /** Dollars. */
  cost: number;
  /** Milliseconds the model worked. */
  ms: number;
  /** Assistant messages. */
  turns: number;
  /** Sessions that had any of it. */
  sessions: number;
}

/** One group of a breakdown: its key (a day, a model, a folder, a device id) and what people read. */
export interface InsightsGroup extends InsightsSums {
  key: string;
  label: string;
}

/** One tool's calls and the time its results took. */
export interface InsightsTool {
  tool: string;
  calls: number;
  ms: number;
  sessions: number;
}

/** One of the sessions that cost most in the range. */
export interface InsightsTopSession {
  sessionId: string;
  title: string;
  cwd?: string;
  cost: number;
  tokens: number;
  turns: number;
}

/** A report over a range of days (core's `Insights` makes it; this page and its CSV show it). */
export interface InsightsPageReport {
  /** Days of the report, inclusive (`YYYY-MM-DD`, UTC). */
  from: string;
  to: string;
  totals: InsightsSums;
  /** Every day of the range, oldest first (days without usage included, for charts). */
  byDay: InsightsGroup[];
  /** Weeks (keyed by their Monday), oldest first. */
  byWeek: InsightsGroup[];
  /** Most costly first (then most tokens). */
  byModel: InsightsGroup[];
  byProject: InsightsGroup[];
  byDevice: InsightsGroup[];
  /** A team's report, for its owner and admins: the totals of each member. */
  byMember?: InsightsGroup[];
  /** Most called first. */
  byTool: InsightsTool[];
  topSessions: InsightsTopSession[];
  /** Sessions backed up before usage was rolled up: not in the sums. */
  uncounted: number;
}

/** Bars a chart draws at most (the table beside it lists the same groups). */
const MAX_BARS = 12;

/** Tokens in short (1.2M, 34k). */
export function shortTokens(n: number): string {
  if (typeof n !== "number" || !Number.isFinite(n)) return NO_NUMBER;
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

/** A duration in short (2 h 05 min, 4 min 12 s, 800 ms). */
export function duration(ms: number): string {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return NO_NUMBER;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${String(s % 60).padStart(2, "0")} s` : `${m} min`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/** A chart's axes: what the bars are (x) and what their height counts (y), and how a value reads. */
interface ChartAxes {
  x: string;
  y: string;
  /** A value as the axis and the bars' labels print it (`$1.20`, `34`). */
  value: (n: number) => string;
}

/** Bars that get their value printed above them (more would overlap: the highest is printed then). */
const LABELLED_BARS = 16;
/** Characters of a bar's name under the axis when only some are named (first, middle, last). */
const X_LABEL_CHARS = 12;

function cut(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/**
 * A bar chart of `bars` (one bar per label, oldest or largest first) as accessible SVG: a
 * `role="img"` with a title and a description; a y axis with its name and ticks at 0, half and
 * the highest value; an x axis with its name and the bars' names (each bar's when they fit, else
 * the first, middle and last); values printed above the bars (the highest only, when there are
 * many); each bar with its own title (hover shows it).
 */
function barChart(
  id: string,
  title: string,
  given: { label: string; value: number; shown: string; tick?: string }[],
  axes: ChartAxes,
): string {
  // A value that is not a finite number (a stored null) draws no bar: its table row shows "—".
  const bars = given.map((b) => ({
    ...b,
    value: typeof b.value === "number" && Number.isFinite(b.value) ? b.value : 0,
  }));
  // About the size it is drawn at beside its table, so its words read at the page's small size.
  const [width, height] = [480, 230];
  const [left, right, top, bottom] = [60, 10, 32, 44];
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const max = Math.max(...bars.map((b) => b.value), 0);
  // Nothing to draw: the table (or its "nothing" line) says so alone.
  if (max <= 0) return "";
  const step = plotW / bars.length;
  const barGap = step > 6 ? 2 : 0;
  const y = (value: number) => top + plotH - (value / max) * plotH;
  const text = (x: number, yAt: number, anchor: string, content: string, cls: string) =>
    `<text class="${cls}" x="${Math.round(x)}" y="${Math.round(yAt)}" text-anchor="${anchor}">${escapeHtml(content)}</text>`;
  const highest = bars.find((b) => b.value === max);
  const rects = bars
    .map((bar, i) => {
      const h = Math.max(bar.value > 0 ? 1 : 0, Math.round((bar.value / max) * plotH));
      const x = left + i * step;
      const w = Math.max(1, step - barGap);
      const valueLabel =
        bar.value > 0 && (bars.length <= LABELLED_BARS || bar === highest)
          ? text(x + w / 2, top + plotH - h - 4, "middle", axes.value(bar.value), "value")
          : "";
      return `<rect class="bar" x="${x.toFixed(1)}" y="${top + plotH - h}" width="${w.toFixed(1)}" height="${h}"><title>${escapeHtml(
        `${bar.label}: ${bar.shown}`,
      )}</title></rect>${valueLabel}`;
    })
    .join("");
  const ticks = [0, max / 2, max]
    .map(
      (v) =>
        `<line class="tick" x1="${left - 4}" y1="${y(v).toFixed(1)}" x2="${left}" y2="${y(v).toFixed(1)}"></line>${text(
          left - 6,
          y(v) + 3,
          "end",
          axes.value(v),
          "tick-label",
        )}`,
    )
    .join("");
  const named =
    bars.length <= LABELLED_BARS
      ? bars.map((_, i) => i)
      : [...new Set([0, Math.floor((bars.length - 1) / 2), bars.length - 1])];
  const xLabels = named
    .map((i) => {
      const bar = bars[i] as { label: string; tick?: string };
      const label = bar.tick ?? bar.label;
      const x = left + i * step + step / 2;
      const anchor =
        bars.length > LABELLED_BARS && i === 0
          ? "start"
          : bars.length > LABELLED_BARS && i === bars.length - 1
            ? "end"
            : "middle";
      const at =
        bars.length > LABELLED_BARS && i === 0
          ? left
          : bars.length > LABELLED_BARS && i === bars.length - 1
            ? width - right
            : x;
      const chars = bars.length <= LABELLED_BARS ? Math.min(Math.max(4, Math.floor(step / 6.5)), 30) : X_LABEL_CHARS;
      return text(at, top + plotH + 14, anchor, cut(label, chars), "x-label");
    })
    .join("");
  const summary = `${axes.y} by ${axes.x.toLowerCase()}, ${bars.length} bars from ${bars[0]?.label ?? ""} to ${
    bars[bars.length - 1]?.label ?? ""
  }. Highest: ${highest?.label ?? ""} with ${highest?.shown ?? ""}.`;
  return `<svg class="chart" id="${id}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-t ${id}-d"><title id="${id}-t">${escapeHtml(
    title,
  )}</title><desc id="${id}-d">${escapeHtml(summary)}</desc>${text(left, 12, "start", axes.y, "axis-name y-name")}<line class="axis" x1="${left}" y1="${top}" x2="${left}" y2="${
    top + plotH
  }"></line><line class="axis" x1="${left}" y1="${top + plotH}" x2="${width - right}" y2="${top + plotH}"></line>${ticks}${rects}${xLabels}${text(
    left + plotW / 2,
    height - 6,
    "middle",
    axes.x,
    "axis-name x-name",
  )}</svg>`;
}

/** A table of groups: name, cost, tokens, model time, turns, sessions. */
function groupTable(caption: string, groups: InsightsGroup[], link?: (g: InsightsGroup) => string | undefined): string {
  if (groups.length === 0) return `<p class="empty">Nothing in this range.</p>`;
  const rows = groups
    .map((g) => {
      const href = link?.(g);
      const name = escapeHtml(oneLine(g.label, 80));
      return `<tr><th scope="row">${href ? `<a href="${escapeHtml(href)}">${name}</a>` : name}</th><td>${dollars(
        g.cost,
      )}</td><td>${shortTokens(g.tokens)}</td><td>${duration(g.ms)}</td><td>${g.turns.toLocaleString("en-US")}</td><td>${g.sessions.toLocaleString("en-US")}</td></tr>`;
    })
    .join("");
  return `<table class="insights-table"><caption>${escapeHtml(caption)}</caption><thead><tr><th scope="col">${escapeHtml(
    caption.split(" ").pop() ?? "",
  )}</th><th scope="col">Cost</th><th scope="col">Tokens</th><th scope="col">Model time</th><th scope="col">Turns</th><th scope="col">Sessions</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A chart of groups by cost (largest first, at most {@link MAX_BARS}) beside their table. */
function breakdown(
  id: string,
  heading: string,
  caption: string,
  groups: InsightsGroup[],
  link?: (g: InsightsGroup) => string | undefined,
) {
  const bars = groups.slice(0, MAX_BARS).map((g) => ({ label: g.label, value: g.cost, shown: dollars(g.cost) }));
  const axes = { x: caption.split(" ").pop() ?? "", y: "Cost (USD)", value: dollars };
  return `<section class="insights-part" aria-labelledby="${id}-h"><h2 id="${id}-h">${escapeHtml(heading)}</h2>
<div class="insights-pair">${barChart(id, `Cost ${caption.toLowerCase()}`, bars, axes)}${groupTable(caption, groups, link)}</div></section>`;
}

/** Everything the page needs: the report, and the range the form shows. */
export interface InsightsPageInput {
  report: InsightsPageReport;
  /** `day` or `week`: how the time chart groups. */
  per: "day" | "week";
  /** The `since` the range was asked with (`all`, `30d`…), to mark its quick link. */
  since?: string;
  /** A team's report (`/insights?team=`): its sessions are the team's, read in the team's viewer. */
  team?: { id: string; name: string };
}

/** The ranges offered in one click. */
const QUICK_RANGES: Array<[since: string, label: string, per: "day" | "week"]> = [
  ["7d", "7 days", "day"],
  ["30d", "30 days", "day"],
  ["90d", "90 days", "week"],
  ["365d", "a year", "week"],
  ["all", "all time", "week"],
];

/** The range form: quick ranges, then days to pick (`from`/`to` as given, when refused). */
function rangeForm(
  from: string,
  to: string,
  per: "day" | "week",
  since: string | undefined,
  csv?: string,
  team?: string,
): string {
  const quick = QUICK_RANGES.map(
    ([value, label, quickPer]) =>
      `<a href="/insights${escapeHtml(query({ since: value, per: quickPer, team }))}"${value === since ? ' aria-current="true"' : ""}>${label}</a>`,
  ).join(" · ");
  return `<form method="get" action="/insights" class="filters insights-range">${
    team ? `<input type="hidden" name="team" value="${escapeHtml(team)}">` : ""
  }
<p class="quick-ranges">Show: ${quick}</p>
<div class="filter-row"><label>From <input type="date" name="from" value="${escapeHtml(from)}"></label>
<label>To <input type="date" name="to" value="${escapeHtml(to)}"></label>
<label>Per <select name="per"><option value="day"${per === "day" ? " selected" : ""}>day</option><option value="week"${per === "week" ? " selected" : ""}>week</option></select></label>
<button type="submit">Show</button>${csv ? ` <a href="/insights.csv${escapeHtml(csv)}" download>Download CSV</a>` : ""}</div></form>`;
}

/** The insights page for a range it refused (a reversed or malformed one): why, and the form again. */
export function renderInsightsRefused(
  chrome: Omit<LibraryChrome, "title" | "section">,
  input: { from?: string; to?: string; per?: "day" | "week"; problem: string },
): string {
  const body = `<p class="refused insights-refused" role="alert">${escapeHtml(input.problem)}</p>
${rangeForm(input.from ?? "", input.to ?? "", input.per ?? "day", undefined)}`;
  return renderLibraryPage({ ...chrome, title: "Insights", section: "insights" }, body);
}

/** The insights page. */
export function renderInsightsPage(chrome: Omit<LibraryChrome, "title" | "section">, input: InsightsPageInput): string {
  const { report, per, team } = input;
  const t = report.totals;
  const range = query({ from: report.from, to: report.to, team: team?.id });
  const sessionHref = (id: string) =>
    team
      ? `/teams/${encodeURIComponent(team.id)}/sessions/${encodeURIComponent(id)}`
      : `/sessions/${encodeURIComponent(id)}`;
  const time = per === "week" ? report.byWeek : report.byDay;
  const timeBars = time.map((g) => ({
    label: g.label,
    // Under the axis: the day, or the week's Monday (its name says "week of" already).
    tick: g.key,
    value: g.cost,
    shown: `${dollars(g.cost)}, ${shortTokens(g.tokens)} tokens`,
  }));
  const tools = report.byTool
    .map(
      (tool) =>
        `<tr><th scope="row">${escapeHtml(oneLine(tool.tool, 60))}</th><td>${tool.calls.toLocaleString("en-US")}</td><td>${duration(tool.ms)}</td><td>${tool.sessions.toLocaleString("en-US")}</td></tr>`,
    )
    .join("");
  const toolBars = report.byTool
    .slice(0, MAX_BARS)
    .map((tool) => ({ label: tool.tool, value: tool.calls, shown: count(tool.calls, "call") }));
  const top = report.topSessions
    .map(
      (s) =>
        `<tr><th scope="row"><a href="${escapeHtml(sessionHref(s.sessionId))}">${escapeHtml(oneLine(s.title, 80))}</a>${
          s.cwd ? `<div class="cwd">${escapeHtml(oneLine(s.cwd, 80))}</div>` : ""
        }</th><td>${dollars(s.cost)}</td><td>${shortTokens(s.tokens)}</td><td>${s.turns.toLocaleString("en-US")}</td></tr>`,
    )
    .join("");
  const body = `${rangeForm(report.from, report.to, per, input.since, range, team?.id)}
<section class="insights-totals" aria-label="Totals"><dl>
<div><dt>Cost</dt><dd>${dollars(t.cost)}</dd></div>
<div><dt>Tokens</dt><dd>${shortTokens(t.tokens)}</dd></div>
<div><dt>Model time</dt><dd>${duration(t.ms)}</dd></div>
<div><dt>Turns</dt><dd>${t.turns.toLocaleString("en-US")}</dd></div>
<div><dt>Sessions</dt><dd>${t.sessions.toLocaleString("en-US")}</dd></div>
</dl><p class="muted">${escapeHtml(report.from)} to ${escapeHtml(report.to)} (UTC), from pi's own accounting: input ${shortTokens(
    t.input,
  )}, output ${shortTokens(t.output)}, cache reads ${shortTokens(t.cacheRead)}, cache writes ${shortTokens(t.cacheWrite)}.${
    report.uncounted > 0
      ? ` ${count(report.uncounted, "session")} backed up before insights were kept ${report.uncounted === 1 ? "is" : "are"} not counted.`
      : ""
  }</p></section>
<section class="insights-part" aria-labelledby="time-h"><h2 id="time-h">Cost per ${per}</h2>
<div class="insights-pair">${barChart("time", `Cost per ${per}`, timeBars, {
    x: per === "week" ? "Week (starting Monday)" : "Day (UTC)",
    y: "Cost (USD)",
    value: dollars,
  })}${groupTable(
    `Cost per ${per === "week" ? "Week" : "Day"}`,
    [...time].reverse().filter((g) => g.turns > 0 || g.tokens > 0),
  )}</div></section>
${breakdown("model", "By model", "By Model", report.byModel)}
${breakdown("project", "By project", "By Project", report.byProject, (g) => (g.key && !team ? `/?cwd=${encodeURIComponent(g.key)}` : undefined))}
${
  team
    ? report.byMember
      ? breakdown("member", "By member", "By Member", report.byMember)
      : ""
    : breakdown("device", "By machine", "By Machine", report.byDevice)
}
<section class="insights-part" aria-labelledby="tools-h"><h2 id="tools-h">By tool</h2>
<div class="insights-pair">${barChart("tools", "Tool calls", toolBars, {
    x: "Tool",
    y: "Calls",
    value: (n) => shortTokens(n),
  })}${
    tools
      ? `<table class="insights-table"><caption>Tool calls</caption><thead><tr><th scope="col">Tool</th><th scope="col">Calls</th><th scope="col">Result time</th><th scope="col">Sessions</th></tr></thead><tbody>${tools}</tbody></table>`
      : `<p class="empty">No tool calls in this range.</p>`
  }</div></section>
<section class="insights-part" aria-labelledby="top-h"><h2 id="top-h">Sessions that cost most</h2>${
    top
      ? `<table class="insights-table"><caption>Top sessions by cost</caption><thead><tr><th scope="col">Session</th><th scope="col">Cost</th><th scope="col">Tokens</th><th scope="col">Turns</th></tr></thead><tbody>${top}</tbody></table>`
      : `<p class="empty">Nothing in this range.</p>`
  }</section>`;
  const title = team ? `Insights: ${oneLine(team.name, 100)}` : "Insights";
  return renderLibraryPage({ ...chrome, title, section: team ? "teams" : "insights" }, body);
}

/** One CSV field: quoted, and defused against spreadsheet formulas (`=`, `+`, `-`, `@` first). */
function csvField(value: string | number): string {
  // A number no sum should hold (a stored null, Infinity) is an empty field, never "Infinity".
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  if (typeof value !== "string") return "";
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${text.replace(/"/g, '""')}"`;
}

/**
 * The report as CSV: one row per group of every breakdown (`breakdown` names which); a tool's
 * row has its calls, and `model_ms` is then the time its results took.
 */
export function insightsCsv(report: InsightsPageReport): string {
  const header = [
    "breakdown",
    "key",
    "label",
    "cost_usd",
    "tokens",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "model_ms",
    "turns",
    "calls",
    "sessions",
  ];
  const lines = [header.join(",")];
  const parts: [string, InsightsGroup[]][] = [
    ["day", report.byDay],
    ["week", report.byWeek],
    ["model", report.byModel],
    ["project", report.byProject],
    ["machine", report.byDevice],
    ["member", report.byMember ?? []],
  ];
  for (const [name, groups] of parts) {
    for (const g of groups) {
      lines.push(
        [
          name,
          g.key,
          g.label,
          g.cost,
          g.tokens,
          g.input,
          g.output,
          g.cacheRead,
          g.cacheWrite,
          g.ms,
          g.turns,
          0,
          g.sessions,
        ]
          .map(csvField)
          .join(","),
      );
    }
  }
  for (const tool of report.byTool) {
    lines.push(
      ["tool", tool.tool, tool.tool, 0, 0, 0, 0, 0, 0, tool.ms, 0, tool.calls, tool.sessions].map(csvField).join(","),
    );
  }
  return `${lines.join("\r\n")}\r\n`;
}
