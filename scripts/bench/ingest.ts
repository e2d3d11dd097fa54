/**
 * Ingest benchmark (issue: sync service), on both store pairs over real HTTP:
 * - single-line append latency, p50 and p99;
 * - bulk throughput (MB/s): the 40 MB session pushed in 1 MB gzip chunks;
 * - the context of that session through the API, against pi's in-process
 *   SessionManager.open + buildSessionContext of the same file, in the same run.
 * Target: context through the API at most 1.0× pi's local time.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { serve } from "@hono/node-server";
import { createApp } from "@pisync/api";
import { Tokens } from "@pisync/core";
import { parseSession, splitLines } from "@pisync/format";
import type { Stores } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { embeddedStores } from "@pisync/store/embedded";
import { freePort } from "@pisync/testing/servers";
import { withAwsServers } from "./aws-servers.js";
import { cachedSession } from "./generate-session.js";

const dir = join(process.cwd(), ".bench");
mkdirSync(dir, { recursive: true });
const file = cachedSession(dir);
const bytes = new Uint8Array(readFileSync(file));
const sessionId = parseSession(bytes.subarray(0, bytes.indexOf(10) + 1)).header?.id as string;
const size = statSync(file).size;
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function measure(name: string, stores: Stores) {
  const app = createApp({ stores });
  const port = await freePort();
  const server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" });
  const base = `http://127.0.0.1:${port}`;
  const token = (await new Tokens(stores.meta).create("bench", "bench")).token;
  const auth = { Authorization: `Bearer ${token}` };

  // Single-line appends to a small session.
  const small = "bench-small";
  let offset = 0;
  const head = `${JSON.stringify({ type: "session", version: 3, id: small, timestamp: new Date().toISOString(), cwd: "/b" })}\n`;
  await fetch(`${base}/v1/sessions/${small}`, {
    method: "PATCH",
    headers: { ...auth, "Upload-Offset": "0" },
    body: head,
  });
  offset += Buffer.byteLength(head);
  const latencies: number[] = [];
  for (let i = 0; i < 300; i++) {
    const line = `${JSON.stringify({ type: "custom", id: `c${i}`, parentId: i ? `c${i - 1}` : null, timestamp: new Date().toISOString(), customType: "bench", data: { i } })}\n`;
    const t = performance.now();
    const r = await fetch(`${base}/v1/sessions/${small}`, {
      method: "PATCH",
      headers: { ...auth, "Upload-Offset": String(offset) },
      body: line,
    });
    await r.arrayBuffer();
    latencies.push(performance.now() - t);
    offset += Buffer.byteLength(line);
  }

  // Bulk: the big session in ~1 MB gzip chunks at line boundaries.
  const spans = splitLines(bytes);
  let start = 0;
  const t0 = performance.now();
  for (let k = 0; k < spans.length; ) {
    let end = start;
    while (k < spans.length && (end - start < 1024 * 1024 || end === start)) {
      end = spans[k].offset + spans[k].length + 1;
      k++;
    }
    const r = await fetch(`${base}/v1/sessions/${sessionId}`, {
      method: "PATCH",
      headers: { ...auth, "Upload-Offset": String(start), "Content-Encoding": "gzip" },
      body: gzipSync(bytes.subarray(start, end)),
    });
    if (r.status !== 200) throw new Error(`bulk append failed: ${r.status} ${await r.text()}`);
    start = end;
  }
  const bulkSeconds = (performance.now() - t0) / 1000;

  // Context through the API: the first read loads the tree pages, later ones only new pages.
  const times: number[] = [];
  let messages = 0;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const r = await fetch(`${base}/v1/sessions/${sessionId}/context`, { headers: auth });
    const body = (await r.json()) as { messages: unknown[] };
    times.push(performance.now() - t);
    messages = body.messages.length;
  }
  server.close();
  return {
    name,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    mbps: size / 1024 / 1024 / bulkSeconds,
    context: quantile(times.slice(1), 0.5),
    coldContext: times[0],
    messages,
  };
}

function piLocal(): { ms: number; messages: number } {
  const runs: { ms: number; messages: number }[] = [];
  for (let i = 0; i < 5; i++) {
    const out = execFileSync(process.execPath, [join(import.meta.dirname, "format-child.mjs"), "pi", file], {
      encoding: "utf8",
    });
    runs.push(JSON.parse(out.trim().split("\n").pop() as string));
  }
  return {
    ms: quantile(
      runs.map((r) => r.ms),
      0.5,
    ),
    messages: runs[0].messages,
  };
}

const results = [];
const data = mkdtempSync(join(tmpdir(), "pisync-bench-"));
const embedded = embeddedStores(data);
results.push(await measure("embedded (files + SQLite)", embedded));
embedded.close();
rmSync(data, { recursive: true, force: true });

results.push(await withAwsServers((config) => measure("AWS (s3rver + DynamoDB Local)", awsStores(config))));

execFileSync("npm", ["run", "build", "-w", "@pisync/format"], { stdio: "ignore" });
const pi = piLocal();
console.log(
  `session: ${(size / 1024 / 1024).toFixed(1)} MB; pi's local open + buildSessionContext: ${pi.ms.toFixed(0)} ms (${pi.messages} messages)`,
);
for (const r of results) {
  if (r.messages !== pi.messages) throw new Error(`${r.name}: context has ${r.messages} messages, pi's ${pi.messages}`);
  console.log(
    `${r.name}: append p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; bulk ${r.mbps.toFixed(1)} MB/s; ` +
      `context via API: first read ${r.coldContext.toFixed(0)} ms = ${(r.coldContext / pi.ms).toFixed(2)}× pi's local time ` +
      `(target ≤ 1.0), later reads ${r.context.toFixed(0)} ms = ${(r.context / pi.ms).toFixed(2)}×`,
  );
}
