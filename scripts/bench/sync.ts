/**
 * Sync benchmark (issue: CLI), with the bundled `pisync watch` against the one-machine server:
 * - bytes sent per byte appended, over a session that grows line by line (lines replayed from
 *   the benchmark session written by pi's library), against re-uploading the whole file on
 *   each change; target ≤ 0.3;
 * - latency from a local append to the server's HEAD reflecting it, p50 and p99; target p99 ≤ 1.5 s;
 * - outage recovery: the server unreachable for 4–10 s while a line is appended, then back:
 *   time from its return to the line being stored, median and max over 10 outages; target
 *   ≤ 5 s;
 * - RSS and CPU of `pisync watch` idle on 1,000 files.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNodeServer } from "@pisync/api";
import { splitLines } from "@pisync/format";
import { freePort } from "@pisync/testing/servers";
import { cachedSession } from "./generate-session.js";

const cli = new URL("../../packages/cli/dist/pisync.mjs", import.meta.url).pathname;
execFileSync(process.execPath, [new URL("../../packages/cli/build.mjs", import.meta.url).pathname], {
  stdio: "inherit",
});
const benchDir = join(process.cwd(), ".bench");
mkdirSync(benchDir, { recursive: true });
const source = readFileSync(cachedSession(benchDir));
const spans = splitLines(source);

const work = mkdtempSync(join(tmpdir(), "pisync-sync-bench-"));
const server = await startNodeServer({
  port: await freePort(),
  host: "127.0.0.1",
  dataDir: join(work, "data"),
  log: () => {},
});

// A counting proxy: request body bytes on the wire; `down` cuts every connection (an outage).
let wireBytes = 0;
let down = false;
const proxyPort = await freePort();
const proxy = createServer(async (req, res) => {
  if (down) return void req.socket.destroy();
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  wireBytes += body.length;
  const upstream = await fetch(`${server.url}${req.url}`, {
    method: req.method,
    headers: Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)),
    ) as Record<string, string>,
    body: body.length ? body : undefined,
  });
  const out = Buffer.from(await upstream.arrayBuffer());
  const headers: Record<string, string> = {};
  upstream.headers.forEach((v, k) => {
    if (!["content-encoding", "content-length", "transfer-encoding", "connection"].includes(k)) headers[k] = v;
  });
  res.writeHead(upstream.status, headers).end(out);
});
await new Promise<void>((resolve) => proxy.listen(proxyPort, "127.0.0.1", () => resolve()));

const home = join(work, "home");
const root = join(home, ".pi", "agent", "sessions");
const env = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_STATE_HOME: join(home, ".state"),
  PI_CODING_AGENT_DIR: join(home, ".pi", "agent"),
  PISYNC_ENDPOINT: `http://127.0.0.1:${proxyPort}`,
  PISYNC_TOKEN: server.token,
};
// Run as users run it: the file itself (its shebang sets the node flags).
const startWatch = (): ChildProcess => spawn(cli, ["watch"], { env, stdio: "ignore" });
const headOffset = async (id: string) => {
  const r = await fetch(`${server.url}/v1/sessions/${id}`, {
    method: "HEAD",
    headers: { Authorization: `Bearer ${server.token}` },
  });
  return r.ok ? Number(r.headers.get("Upload-Offset")) : -1;
};
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

// 1 and 2: a session growing line by line.
const folder = join(root, "--bench--");
mkdirSync(folder, { recursive: true });
const file = join(folder, "bench.jsonl");
const id = JSON.parse(source.subarray(spans[0].offset, spans[0].length).toString()).id as string;
const watcher = startWatch();
await new Promise((r) => setTimeout(r, 500));
const lines = 300;
let appended = 0;
let wholeFile = 0;
let size = 0;
const latencies: number[] = [];
for (let i = 0; i < lines; i++) {
  const line = source.subarray(spans[i].offset, spans[i].offset + spans[i].length + 1);
  const t = performance.now();
  appendFileSync(file, line);
  appended += line.length;
  size += line.length;
  wholeFile += size;
  while ((await headOffset(id)) < size) await new Promise((r) => setTimeout(r, 5));
  latencies.push(performance.now() - t);
}
const ratio = wireBytes / appended;

// 3: outages.
const recoveries: number[] = [];
let line = lines;
for (let outage = 0; outage < 10; outage++) {
  down = true;
  const next = source.subarray(spans[line].offset, spans[line].offset + spans[line].length + 1);
  line++;
  appendFileSync(file, next);
  size += next.length;
  await new Promise((r) => setTimeout(r, 4000 + Math.random() * 6000));
  down = false;
  const back = performance.now();
  while ((await headOffset(id)) < size) await new Promise((r) => setTimeout(r, 20));
  recoveries.push(performance.now() - back);
}
watcher.kill("SIGTERM");

// 4: idle on 1,000 files.
const many = join(root, "--many--");
mkdirSync(many, { recursive: true });
for (let i = 0; i < 1000; i++) {
  const sid = `idle-${i}`;
  writeFileSync(
    join(many, `${sid}.jsonl`),
    `${JSON.stringify({ type: "session", version: 3, id: sid, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/m" })}\n`,
  );
}
const idle = startWatch();
while ((await headOffset("idle-999")) < 0) await new Promise((r) => setTimeout(r, 200));
await new Promise((r) => setTimeout(r, 3000));
const procStat = () => readFileSync(`/proc/${idle.pid}/stat`, "utf8").split(" ");
const ticks = () => Number(procStat()[13]) + Number(procStat()[14]);
const before = ticks();
const idleSeconds = 10;
await new Promise((r) => setTimeout(r, idleSeconds * 1000));
const cpuSeconds = (ticks() - before) / 100;
const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${idle.pid}/status`, "utf8"))?.[1]) * 1024;
idle.kill("SIGTERM");

proxy.close();
await server.close();
rmSync(work, { recursive: true, force: true });

console.log(`bundle: ${(readFileSync(cli).length / 1024).toFixed(1)} KB (target ≤ 150 KB)`);
console.log(
  `bytes sent per byte appended: ${ratio.toFixed(3)} (target ≤ 0.3); re-uploading the whole file on each change: ${(wholeFile / appended).toFixed(1)}`,
);
console.log(
  `append → HEAD latency over ${lines} lines: p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p99 ${quantile(latencies, 0.99).toFixed(0)} ms (target p99 ≤ 1500 ms)`,
);
console.log(
  `outage recovery over ${recoveries.length} outages of 4–10 s: median ${quantile(recoveries, 0.5).toFixed(0)} ms, max ${Math.max(...recoveries).toFixed(0)} ms (target ≤ 5000 ms)`,
);
console.log(
  `idle on 1,000 files: RSS ${(rss / 1024 / 1024).toFixed(1)} MB (target ≤ 60 MB), CPU ${((cpuSeconds / idleSeconds) * 100).toFixed(2)}% over ${idleSeconds} s`,
);
