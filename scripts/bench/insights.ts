/**
 * Insights benchmark: what a year's report does to everyone else's requests.
 *
 * The server runs as its own process (`scripts/start.ts`, as `npm start` runs it). INSIGHTS_SESSIONS
 * sessions (default 500) of INSIGHTS_MESSAGES messages each (default 500), their assistant
 * messages spread over the last 366 days with usage, models and tool calls, are appended; then
 * `GET /v1/insights?since=366d` and the library's `/insights` page are asked (twice each, and
 * four at once) while /healthz is asked every 50 ms. Printed: each report's time to answer and
 * the slowest /healthz meanwhile, against /healthz at rest in the same run (their ratio).
 *
 *   npm run bench:insights            (INSIGHTS_SESSIONS=50 for a quick run)
 */
import { healthzDuring, startLocalServer, timedGet } from "./local-server.js";

const SESSIONS = Number(process.env.INSIGHTS_SESSIONS ?? 500);
const MESSAGES = Number(process.env.INSIGHTS_MESSAGES ?? 500);
const DAY_MS = 86_400_000;

const server = await startLocalServer("pisync-insights-");
const { base, auth } = server;
const line = (entry: Record<string, unknown>) => `${JSON.stringify(entry)}\n`;
const MODELS = ["claude-sonnet-4", "claude-opus-4", "gpt-5", "gemini-2.5-pro"];
const TOOLS = ["read", "edit", "bash", "write", "grep"];

/** One session: a user message, then assistant turns (with usage) and tool results, over a year. */
function sessionText(s: number): string {
  const id = `insights-${s}`;
  const now = Date.now();
  const start = now - 365 * DAY_MS;
  let body = line({ type: "session", version: 3, id, timestamp: new Date(start).toISOString(), cwd: `/w/p${s % 40}` });
  let parent: string | null = null;
  for (let m = 0; m < MESSAGES; m++) {
    const entryId = `${s.toString(16)}-${m}`;
    // Each session's messages cover the whole year, in order.
    const at = new Date(start + Math.floor((m / MESSAGES) * 365 * DAY_MS) + s * 1000).toISOString();
    const role = m % 3;
    const message =
      role === 0
        ? { role: "user", content: `question ${m}`, timestamp: 1 }
        : role === 1
          ? {
              role: "assistant",
              provider: "p",
              model: MODELS[(s + m) % MODELS.length],
              content: [{ type: "toolCall", id: `c${m}`, name: TOOLS[m % TOOLS.length], arguments: {} }],
              usage: {
                input: 1000,
                output: 200,
                cacheRead: 500,
                cacheWrite: 0,
                totalTokens: 1700,
                cost: { input: 0.003, output: 0.003, cacheRead: 0.0005, cacheWrite: 0, total: 0.0065 },
              },
              timestamp: 1,
            }
          : {
              role: "toolResult",
              toolCallId: `c${m - 1}`,
              toolName: TOOLS[(m - 1) % TOOLS.length],
              content: [],
              durationMs: 120,
              timestamp: 1,
            };
    body += line({ type: "message", id: entryId, parentId: parent, timestamp: at, message });
    parent = entryId;
  }
  return body;
}

console.error(`… appending ${SESSIONS} sessions of ${MESSAGES} messages`);
for (let s = 0; s < SESSIONS; s++) {
  const id = `insights-${s}`;
  const r = await fetch(`${base}/v1/sessions/${id}`, {
    method: "PATCH",
    headers: { ...auth, "Upload-Offset": "0" },
    body: sessionText(s),
  });
  if (!r.ok) throw new Error(`append ${id}: ${r.status} ${await r.text()}`);
}

const rest = await healthzDuring(base, () => new Promise((r) => setTimeout(r, 2000)));
console.log(
  `library: ${SESSIONS} sessions × ${MESSAGES} messages over 366 days; /healthz at rest: slowest ${rest.slowest.toFixed(1)} ms`,
);
const report = () => timedGet(`${base}/v1/insights?since=366d`, auth);
const page = () => timedGet(`${base}/insights?since=366d`, auth);
const shapes: Array<[string, Array<() => Promise<{ status: number; ms: number }>>]> = [
  ["GET /v1/insights?since=366d", [report]],
  ["GET /v1/insights?since=366d again", [report]],
  ["four reports at once", [report, report, report, report]],
  ["the library's /insights page", [page]],
];
console.log("report | answers | answered in (ms) | slowest /healthz meanwhile (ms) | against rest");
for (const [name, asks] of shapes) {
  const { result, slowest } = await healthzDuring(base, () => Promise.all(asks.map((ask) => ask())));
  const statuses = [...new Set(result.map((r) => r.status))].join("/");
  const ms = Math.max(...result.map((r) => r.ms));
  console.log(
    `${name} | ${statuses} | ${ms.toFixed(0)} | ${slowest.toFixed(1)} | ${(slowest / rest.slowest).toFixed(1)}×`,
  );
}
await server.stop();
