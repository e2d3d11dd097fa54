/**
 * Hostile-search benchmark: what one user's queries can make the one-machine server do.
 *
 * The server runs as its own process (`scripts/start.ts`, as `npm start` runs it). A library of
 * SEARCH_HOSTILE_MB megabytes (default 20) of ordinary English-like text is appended and
 * indexed (some entries' tool calls name long paths); then the hostile query shapes are sent
 * one by one (and one of them four at once) while /healthz is asked every 50 ms. Printed per
 * shape: the answers' statuses, the time to answer, and the slowest /healthz meanwhile, against
 * /healthz at rest (their ratio).
 *
 *   npm run bench:search-hostile            (SEARCH_HOSTILE_MB=50 for the size)
 */
import { healthzDuring as during, startLocalServer, timedGet } from "./local-server.js";

const MEGABYTES = Number(process.env.SEARCH_HOSTILE_MB ?? 20);
const server = await startLocalServer("pisync-search-hostile-");
const { base, auth } = server;
const healthzDuring = <T>(work: () => Promise<T>) => during(base, work);
const get = timedGet;

const WORDS =
  "the of and to a in is it that for on was with as be at by this have from or one had not but what all were when we there can an your which their said if do will each about how up out them then she many some so these would other into has more her two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know".split(
    " ",
  );
let seed = 1;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
/** Zipf-like text: common words very common, as in real sessions. */
const text = (words: number) =>
  Array.from({ length: words }, () => WORDS[Math.floor(WORDS.length * random() ** 3)]).join(" ");

const line = (entry: Record<string, unknown>) => `${JSON.stringify(entry)}\n`;
async function writeLibrary(): Promise<number> {
  const sessionBytes = 200_000;
  const sessions = Math.max(1, Math.round((MEGABYTES * 1_000_000) / sessionBytes));
  for (let s = 0; s < sessions; s++) {
    const id = `bench-${s}`;
    let body = line({ type: "session", version: 3, id, timestamp: "2026-02-01T10:00:00.000Z", cwd: "/bench" });
    let parent: string | null = null;
    for (let e = 0; body.length < sessionBytes; e++) {
      const entryId = `${s.toString(16)}-${e}`;
      body += line({
        type: "message",
        id: entryId,
        parentId: parent,
        timestamp: "2026-02-01T10:00:01.000Z",
        message: { role: "user", content: `${text(200)} marker${s}`, timestamp: 1 },
      });
      parent = entryId;
      // A tool call naming long paths: what a `file:` glob crawls.
      const callId = `${entryId}-call`;
      body += line({
        type: "message",
        id: callId,
        parentId: parent,
        timestamp: "2026-02-01T10:00:02.000Z",
        message: {
          role: "assistant",
          content: [{ type: "toolCall", id: "t", name: "read", arguments: { path: `src/${"a".repeat(200)}/${e}.ts` } }],
          timestamp: 1,
        },
      });
      parent = callId;
    }
    const r = await fetch(`${base}/v1/sessions/${id}`, {
      method: "PATCH",
      headers: { ...auth, "Upload-Offset": "0" },
      body,
    });
    if (!r.ok) throw new Error(`append ${id}: ${r.status}`);
  }
  return sessions;
}

const search = (q: string) => get(`${base}/v1/search?q=${encodeURIComponent(q)}&limit=20`, auth);

console.error(`… writing a library of ${MEGABYTES} MB`);
const sessions = await writeLibrary();
console.error(`… ${sessions} sessions written; waiting until the last is searchable`);
// The drain indexes in the background: every session's own word is found once all are indexed.
for (let s = 0; s < sessions; s++) {
  for (;;) {
    const r = await fetch(`${base}/v1/search?q=marker${s}&limit=1`, { headers: auth });
    if (r.ok && ((await r.json()) as { sessions: unknown[] }).sessions.length > 0) break;
    await new Promise((r) => setTimeout(r, 500));
  }
}
await new Promise((r) => setTimeout(r, 5000)); // the last drain's transaction

const rest = await healthzDuring(() => new Promise((r) => setTimeout(r, 2000)));
console.log(`library: ${sessions} sessions, ${MEGABYTES} MB; /healthz at rest: slowest ${rest.slowest.toFixed(1)} ms`);
const phrase = (n: number) => `"${Array(n).fill("the").join(" ")}"`;
const shapes: Array<[string, string[]]> = [
  ["a 249-word phrase (the issue's)", [phrase(249)]],
  ["a 32-word phrase (the budget's most)", [phrase(32)]],
  ["four 32-word phrases at once", [phrase(32), phrase(32), phrase(32), phrase(32)]],
  ["x-a* (a one-letter word in a prefix)", ["x-a*"]],
  ["four two-letter prefixes", ["th* wa* wo* ca*"]],
  ["a common word", ["the"]],
  ["32 common words", [WORDS.slice(0, 32).join(" ")]],
  ["a long file: glob (file:*aaa…b)", [`file:*${"a".repeat(900)}b`]],
  ["four long file: globs at once", Array(4).fill(`file:*${"a".repeat(300)}b`)],
];
console.log("shape | answers | answered in (ms) | slowest /healthz meanwhile (ms) | against rest");
for (const [name, queries] of shapes) {
  const t = performance.now();
  const { result, slowest } = await healthzDuring(() => Promise.all(queries.map(search)));
  const statuses = [...new Set(result.map((r) => r.status))].join("/");
  const ms = Math.max(...result.map((r) => r.ms));
  console.log(
    `${name} | ${statuses} | ${ms.toFixed(0)} | ${slowest.toFixed(1)} (wall ${(performance.now() - t).toFixed(0)}) | ${(slowest / rest.slowest).toFixed(1)}×`,
  );
}
await server.stop();
