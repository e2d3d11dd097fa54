/**
 * Hostile-share benchmark: what one link holder can make the one-machine server do.
 *
 * The server runs as its own process (`scripts/start.ts`, as `npm start` runs it) so its
 * memory is its own. Two shared sessions: one of Markdown built to be slow to parse (160 KB of
 * `*a`, 20,000 nested `>`, 100,000 `[`, a 16 MB line, 150 entries of 60 KB emphasis, a 1 MB
 * tool output) and one of a million lines. While their pages and downloads are fetched (twelve
 * `/raw` at once for the large one), /healthz is asked every 50 ms. Printed: the time each
 * answer took, the slowest /healthz meanwhile and the server's peak RSS, against a baseline
 * measured in the same run (an ordinary session's page, /healthz and RSS at rest). Then the
 * worker pool's own cost: a small page rendered inline and through the pool. The large page is
 * asked twice: first it builds the session's index, then it finds it kept.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { freePort } from "@pisync/testing/servers";
import { renderPage, type SessionPageView } from "@pisync/viewer";
import { workerPool } from "../../functions/api/src/worker-pool.js";

const MILLION = Number(process.env.HOSTILE_LINES ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), "pisync-hostile-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;

/** Starts the server process; resolves with its token. */
async function startServer(): Promise<{ child: ChildProcess; token: string }> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=source",
      "--import",
      "tsx",
      "scripts/start.ts",
      "--no-watch",
      "--port",
      String(port),
      "--data",
      join(dir, "data"),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
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
let stopping = false;
process.on("exit", () => child.kill("SIGTERM")); // never leave the server behind
child.on("exit", (code, signal) => {
  if (!stopping) console.error(`the server stopped: ${signal ?? code}`);
});
const step = (what: string) => console.error(`… ${what} (server RSS ${Math.round(memory().rss / 1048576)} MB)`);
const auth = { Authorization: `Bearer ${token}` };

/** The server's resident memory now, and its peak so far (Linux: /proc). */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** A GET read to its end and dropped as it arrives; its status (0: the connection failed) and time to the last byte. */
function get(url: string): Promise<{ status: number; ms: number; bytes: number }> {
  return new Promise((resolve) => {
    const t = performance.now();
    request(url, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t, bytes }));
    })
      .on("error", () => resolve({ status: 0, ms: performance.now() - t, bytes: 0 }))
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

const line = (entry: Record<string, unknown>) => `${JSON.stringify(entry)}\n`;
const header = (id: string) =>
  line({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" });
const user = (id: string, parentId: string | null, content: string) =>
  line({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content, timestamp: 1 },
  });

/** A fetch tried again when the connection drops (a kept-alive socket the server closed meanwhile); appends are idempotent. */
async function send(url: string, init: RequestInit): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

/** Sends lines with PATCH, a batch of at most 3 MB or 20,000 lines at a time; a longer line through an upload. */
async function upload(id: string, lines: string[]) {
  let offset = 0;
  let batch: string[] = [];
  let size = 0;
  const flush = async () => {
    if (!batch.length) return;
    const body = Buffer.from(batch.join(""));
    const r = await send(`${base}/v1/sessions/${id}`, {
      method: "PATCH",
      headers: { ...auth, "Upload-Offset": String(offset), "Content-Encoding": "gzip" },
      body: gzipSync(body),
    });
    if (r.status !== 200) throw new Error(`append: ${r.status} ${await r.text()}`);
    offset += body.length;
    batch = [];
    size = 0;
  };
  for (const l of lines) {
    const length = Buffer.byteLength(l);
    if (length > 3 * 1024 * 1024) {
      await flush();
      const created = await fetch(`${base}/v1/sessions/${id}/uploads`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ length, sha256: createHash("sha256").update(l).digest("hex") }),
      });
      const { uploadId, url } = (await created.json()) as { uploadId: string; url: string };
      const put = await fetch(url, { method: "PUT", headers: auth, body: l });
      if (put.status >= 300) throw new Error(`upload: ${put.status} ${await put.text()}`);
      const r = await fetch(`${base}/v1/sessions/${id}`, {
        method: "PATCH",
        headers: { ...auth, "Upload-Offset": String(offset), "Pisync-Upload": uploadId },
      });
      if (r.status !== 200) throw new Error(`append of the upload: ${r.status} ${await r.text()}`);
      offset += length;
      continue;
    }
    if (size + length > 3 * 1024 * 1024 || batch.length >= 20_000) await flush();
    batch.push(l);
    size += length;
  }
  await flush();
}

async function share(id: string): Promise<string> {
  const r = await fetch(`${base}/v1/sessions/${id}/shares`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json" },
    body: "{}",
  });
  return ((await r.json()) as { url: string }).url;
}

// The baseline: an ordinary session of 40 short messages.
const ordinary = [header("ordinary")];
for (let i = 0; i < 40; i++)
  ordinary.push(user(`o${i}`, i ? `o${i - 1}` : null, `An ordinary **message** number ${i}.`));
await upload("ordinary", ordinary);
const ordinaryUrl = await share("ordinary");
await get(ordinaryUrl); // warm: the first page also starts the worker
const restMemory = memory();
const restHealthz = (await Promise.all([1, 2, 3, 4, 5].map(() => get(`${base}/healthz`)))).map((r) => r.ms);
const baseline = await healthzDuring(() => get(ordinaryUrl));

// The hostile session: marked-style pathological Markdown, one line of 16 MB.
const hostile = [header("hostile")];
const hostileTexts = [
  "*a".repeat(80_000),
  `${">".repeat(20_000)} deep`,
  "[".repeat(100_000),
  "a".repeat(16 * 1024 * 1024),
  ...Array.from({ length: 150 }, () => "**a".repeat(20_000)),
];
hostileTexts.forEach((text, i) => {
  hostile.push(user(`h${i}`, i ? `h${i - 1}` : null, text));
});
hostile.push(
  line({
    type: "message",
    id: "tool",
    parentId: `h${hostileTexts.length - 1}`,
    timestamp: "2026-01-01T00:00:02.000Z",
    message: {
      role: "toolResult",
      toolCallId: "t",
      toolName: "bash",
      content: [{ type: "text", text: "if [ $a ]; then echo $((1+2)); fi # $HOME\n".repeat(25_000) }],
      isError: false,
      timestamp: 2,
    },
  }),
);
step("uploading the hostile session");
await upload("hostile", hostile);
const hostileUrl = await share("hostile");

// A million lines.
const big = [header("million")];
for (let i = 0; i < MILLION; i++) big.push(user(`m${i}`, i ? `m${i - 1}` : null, `line ${i} of a long session`));
step("uploading the 1M-line session");
const uploadStart = performance.now();
await upload("million", big);
const uploadMs = performance.now() - uploadStart;
big.length = 0;
const bigUrl = await share("million");

const results: { what: string; status: number; ms: number; bytes: number; slowest: number }[] = [];
async function measure(what: string, url: string) {
  step(what);
  const { result, slowest } = await healthzDuring(() => get(url));
  results.push({ what, ...result, slowest });
}
await measure("hostile page", hostileUrl);
await measure("hostile page again", hostileUrl);
await measure("hostile /raw", `${hostileUrl}/raw`);
await measure("hostile /context", `${hostileUrl}/context`);
await measure("1M-line page", bigUrl);
await measure("1M-line page again", bigUrl); // its index is kept: built once per version
await measure("1M-line /raw", `${bigUrl}/raw`);
await measure("1M-line /context", `${bigUrl}/context`);
const twelve = await healthzDuring(() => Promise.all(Array.from({ length: 12 }, () => get(`${bigUrl}/raw`))));
results.push({
  what: "12 × 1M-line /raw at once",
  status: Math.max(...twelve.result.map((r) => r.status)),
  ms: Math.max(...twelve.result.map((r) => r.ms)),
  bytes: twelve.result.reduce((n, r) => n + r.bytes, 0),
  slowest: twelve.slowest,
});
const peak = memory();
stopping = true;
child.kill("SIGTERM");

// The pool's own cost, in this process: a small page inline and through the pool.
const small: SessionPageView = {
  base: "/s/x",
  facts: { title: "t", models: [], messages: 20, toolCalls: 0, tokens: 1, cost: 0, totalsOf: "the whole session" },
  entries: Array.from({ length: 20 }, (_, i) => ({
    id: `e${i}`,
    type: "message",
    entry: { message: { role: "user", content: `some **markdown** ${i}` } },
  })),
  window: { start: 0, end: 20, total: 20 },
  leafId: null,
  branches: false,
  labels: new Map<string, string>(),
  edits: new Map<string, string>(),
  notes: [],
  live: false,
};
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const timeIt = async (run: () => unknown) => {
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  return median(times);
};
const inlineMs = await timeIt(() => renderPage(small));
const rssBefore = process.memoryUsage().rss;
const poolStart = performance.now();
const pool = workerPool({ maxThreads: 1 });
await pool.renderPage(small);
const poolStartMs = performance.now() - poolStart;
const poolMs = await timeIt(() => pool.renderPage(small));
const workerRss = process.memoryUsage().rss - rssBefore;
await pool.close();
rmSync(dir, { recursive: true, force: true });

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
const ms = (n: number) => `${n.toFixed(0)} ms`;
console.log(
  `baseline: ordinary page ${ms(baseline.result.ms)}, /healthz at rest ${ms(Math.max(...restHealthz))} (slowest of 5), ${ms(baseline.slowest)} during the page; server RSS at rest ${mb(restMemory.rss)}`,
);
console.log(`1M-line session uploaded in ${(uploadMs / 1000).toFixed(1)} s`);
for (const r of results) {
  console.log(
    `${r.what.padEnd(28)} ${String(r.status).padEnd(4)} answered in ${ms(r.ms).padStart(8)} (${(r.ms / baseline.result.ms).toFixed(1)}× the ordinary page), ${mb(r.bytes).padStart(7)}; slowest /healthz meanwhile ${ms(r.slowest)}`,
  );
}
console.log(
  `server peak RSS ${mb(peak.peak)} (${(peak.peak / restMemory.rss).toFixed(2)}× at rest), ${mb(peak.rss)} at the end`,
);
console.log(
  `worker pool: a small page ${inlineMs.toFixed(2)} ms inline, ${poolMs.toFixed(2)} ms through the pool (+${(poolMs - inlineMs).toFixed(2)} ms a task); starting a worker ${ms(poolStartMs)} and ~${mb(workerRss)} of RSS`,
);
