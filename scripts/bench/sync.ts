/**
 * Sync benchmark (issue: CLI), with the bundled `pisync watch` against the one-machine server:
 * - bytes sent per byte appended, over a session that grows line by line (lines replayed from
 *   the benchmark session written by pi's library), against re-uploading the whole file on
 *   each change; target ≤ 0.3;
 * - latency from a local append to the server's HEAD reflecting it, p50 and p99; target p99 ≤ 1.5 s;
 * - outage recovery: the server unreachable for 4–10 s while a line is appended, then back:
 *   time from its return to the line being stored, median and max over 10 outages; target
 *   ≤ 5 s;
 * - RSS and CPU of `pisync watch` idle on 1,000 files;
 * - a rename of a large oh-my-pi session (omp 18's own SessionManager, under Bun, renames it:
 *   its 256-byte title slot overwritten in place, a `title_change` appended): bytes `push`
 *   sends, against the file's size; target O(256), no new generation. `BENCH_RENAME_MB` sets
 *   the session's size (default 100); `BENCH_SYNC_ONLY=rename` runs this part alone.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNodeServer } from "@pisync/api";
import { splitLines } from "@pisync/format";
import { ompWrite } from "@pisync/testing/omp";
import { freePort } from "@pisync/testing/servers";
import { startBytes } from "../bundle-start.js";
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

const only = process.env.BENCH_SYNC_ONLY;
const results: string[] = [];
if (only === undefined || only === "watch") await watchParts();
if (only === undefined || only === "rename") await renamePart();

proxy.close();
await server.close();
rmSync(work, { recursive: true, force: true });
console.log(`bundle: ${(startBytes(cli) / 1024).toFixed(1)} KB read at start (target ≤ 150 KB)`);
for (const result of results) console.log(result);

/** `pisync push`, not blocking this process (the server and the proxy answer from it). */
function push(pushEnv: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli, ["push"], { env: pushEnv, stdio: ["ignore", "ignore", "inherit"] });
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`pisync push exited ${code}`))));
  });
}

/** 5: a large omp session renamed, then pushed. */
async function renamePart(): Promise<void> {
  const megabytes = Number(process.env.BENCH_RENAME_MB ?? 100);
  const ompHome = join(work, "omp-home");
  const sessionDir = join(ompHome, ".omp", "agent", "sessions", "-bench");
  mkdirSync(sessionDir, { recursive: true });
  const ompEnv = {
    ...env,
    HOME: ompHome,
    XDG_STATE_HOME: join(ompHome, ".state"),
    XDG_CONFIG_HOME: join(ompHome, ".config"),
  };
  const file = ompWrite({
    home: ompHome,
    sessionDir,
    ops: [
      { kind: "user", text: "start" },
      { kind: "assistant", text: "ok" },
    ],
  });
  // Grown to size with entries of omp's shape (writing 100 MB through omp itself takes minutes).
  const lastId = (JSON.parse(readFileSync(file, "utf8").trim().split("\n").at(-1) as string) as { id: string }).id;
  let parent = lastId;
  const chunk: string[] = [];
  const text = "lorem ipsum dolor sit amet ".repeat(400);
  for (let n = 0, bytes = 0; bytes < megabytes * 1024 * 1024; n++) {
    const id = n.toString(16).padStart(8, "0");
    const line = `${JSON.stringify({ type: "message", id, parentId: parent, timestamp: new Date(n).toISOString(), message: { role: "user", content: `${n} ${text}`, timestamp: n } })}\n`;
    chunk.push(line);
    bytes += line.length;
    parent = id;
    if (chunk.length >= 1000) appendFileSync(file, chunk.splice(0).join(""));
  }
  appendFileSync(file, chunk.join(""));
  const size = readFileSync(file).length;
  await push(ompEnv);
  ompWrite({ file, home: ompHome, sessionDir, ops: [{ kind: "rename", title: "Renamed in the benchmark" }] });
  const before = wireBytes;
  const t = performance.now();
  await push(ompEnv);
  const ms = performance.now() - t;
  const sent = wireBytes - before;
  const sid = (
    JSON.parse(
      readFileSync(file, "utf8")
        .slice(256, 256 + 4096)
        .split("\n")[0],
    ) as { id: string }
  ).id;
  const meta = (await (
    await fetch(`${server.url}/v1/sessions/${sid}`, { headers: { Authorization: `Bearer ${server.token}` } })
  ).json()) as { generation: number; name?: string };
  results.push(
    `rename of a ${(size / 1024 / 1024).toFixed(1)} MB omp session: ${sent} bytes sent by push (the slot and the title_change line; re-uploading: ${size}), ${ms.toFixed(0)} ms, generation ${meta.generation}, title "${meta.name}"`,
  );
}

async function watchParts(): Promise<void> {
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

  results.push(
    `bytes sent per byte appended: ${ratio.toFixed(3)} (target ≤ 0.3); re-uploading the whole file on each change: ${(wholeFile / appended).toFixed(1)}`,
  );
  results.push(
    `append → HEAD latency over ${lines} lines: p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p99 ${quantile(latencies, 0.99).toFixed(0)} ms (target p99 ≤ 1500 ms)`,
  );
  results.push(
    `outage recovery over ${recoveries.length} outages of 4–10 s: median ${quantile(recoveries, 0.5).toFixed(0)} ms, max ${Math.max(...recoveries).toFixed(0)} ms (target ≤ 5000 ms)`,
  );
  results.push(
    `idle on 1,000 files: RSS ${(rss / 1024 / 1024).toFixed(1)} MB (target ≤ 60 MB), CPU ${((cpuSeconds / idleSeconds) * 100).toFixed(2)}% over ${idleSeconds} s`,
  );
}
