/**
 * Hostile-search benchmark: what one user's queries can make the one-machine server do.
 *
 * The server runs as its own process (`scripts/start.ts`, as `npm start` runs it). A library of
 * SEARCH_HOSTILE_MB megabytes (default 20) of ordinary English-like text is appended and
 * indexed; then the query shapes of issue 23 are sent one by one (and one of them four at
 * once) while /healthz is asked every 50 ms. Printed per shape: the answers' statuses, the time
 * to answer, and the slowest /healthz meanwhile, against /healthz at rest.
 *
 *   npm run bench:search-hostile            (SEARCH_HOSTILE_MB=50 for the issue's size)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@pisync/testing/servers";

const MEGABYTES = Number(process.env.SEARCH_HOSTILE_MB ?? 20);
const dir = mkdtempSync(join(tmpdir(), "pisync-search-hostile-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;

/** Starts the server process; resolves with its token. */
async function startServer(): Promise<{ child: ChildProcess; token: string }> {
  const args = ["--conditions=source", "--import", "tsx", "scripts/start.ts", "--no-watch", "--port", String(port)];
  const child = spawn(process.execPath, [...args, "--data", join(dir, "data")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const token = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk) => {
      output += chunk;
      const match = /pst_\S{43}/.exec(output);
      if (match) resolve(match[0]);
    });
    child.on("exit", (code) => reject(new Error(`the server exited (${code}): ${output}`)));
  });
  return { child, token };
}

const { child, token } = await startServer();
process.on("exit", () => child.kill("SIGTERM")); // never leave the server behind
const auth = { Authorization: `Bearer ${token}` };

/** A GET read to its end; its status (0: the connection failed) and time to the last byte. */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; ms: number }> {
  return new Promise((resolve) => {
    const t = performance.now();
    request(url, { headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t }));
    })
      .on("error", () => resolve({ status: 0, ms: performance.now() - t }))
      .end();
  });
}

/** Asks /healthz every 50 ms while `work` runs; the slowest answer. */
async function healthzDuring<T>(work: () => Promise<T>): Promise<{ result: T; slowest: number; asked: number }> {
  let slowest = 0;
  let asked = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      const { ms } = await get(`${base}/healthz`);
      slowest = Math.max(slowest, ms);
      asked++;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const result = await work();
  done = true;
  await poll;
  return { result, slowest, asked };
}

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
];
console.log("shape | answers | answered in (ms) | slowest /healthz meanwhile (ms)");
for (const [name, queries] of shapes) {
  const t = performance.now();
  const { result, slowest } = await healthzDuring(() => Promise.all(queries.map(search)));
  const statuses = [...new Set(result.map((r) => r.status))].join("/");
  const ms = Math.max(...result.map((r) => r.ms));
  console.log(
    `${name} | ${statuses} | ${ms.toFixed(0)} | ${slowest.toFixed(1)} (wall ${(performance.now() - t).toFixed(0)})`,
  );
}
child.kill("SIGTERM");
await new Promise((r) => child.once("exit", r));
rmSync(dir, { recursive: true, force: true });
