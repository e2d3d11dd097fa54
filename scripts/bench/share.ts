/**
 * Share benchmark: the first screen of the 40 MB session's share page (server time, p95 of 20
 * warm requests; target ≤ 150 ms) and its bytes (HTML + CSS + JS; target ≤ 300 KB), the same
 * for requests of another window each (no kept page serves them), and the tree the navigator
 * loads after it, against pi's own HTML export of the same file
 * (`pi --export`), in the same run. pi's export is a file written locally (its time is the
 * whole export); ours is served over HTTP from the one-machine server. Then the first page of
 * the same session on a fresh instance, embedded and on the AWS pair, with its persisted tree
 * index and rebuilt from the index pages (share-fresh.ts).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { startNodeServer } from "@pisync/api";
import { splitLines } from "@pisync/format";
import { freePort } from "@pisync/testing/servers";
import { cachedSession } from "./generate-session.js";
import { freshShareBench } from "./share-fresh.js";

const benchDir = join(process.cwd(), ".bench");
mkdirSync(benchDir, { recursive: true });
const file = cachedSession(benchDir);
const bytes = readFileSync(file);
const id = JSON.parse(bytes.subarray(0, bytes.indexOf(10)).toString()).id as string;
const work = mkdtempSync(join(tmpdir(), "pisync-share-bench-"));
const server = await startNodeServer({
  port: await freePort(),
  host: "127.0.0.1",
  dataDir: join(work, "data"),
  log: () => {},
});
const auth = { Authorization: `Bearer ${server.token}` };

// Upload the session in 1 MB chunks.
let start = 0;
const spans = splitLines(bytes);
for (let k = 0; k < spans.length; ) {
  let end = start;
  while (k < spans.length && end - start < 1024 * 1024) end = spans[k++].offset + spans[k - 1].length + 1;
  const r = await fetch(`${server.url}/v1/sessions/${id}`, {
    method: "PATCH",
    headers: { ...auth, "Upload-Offset": String(start), "Content-Encoding": "gzip" },
    body: gzipSync(bytes.subarray(start, end)),
  });
  if (r.status !== 200) throw new Error(await r.text());
  start = end;
}
const created = await fetch(`${server.url}/v1/sessions/${id}/shares`, {
  method: "POST",
  headers: { ...auth, "Content-Type": "application/json" },
  body: "{}",
});
const { url } = (await created.json()) as { url: string };

/**
 * Time to first byte, total time and bytes on the wire of a GET, with node:http (no client-side
 * buffering games), asking for gzip as browsers do.
 */
function measure(target: string): Promise<{ ttfb: number; total: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    request(target, { headers: { "Accept-Encoding": "gzip" } }, (res) => {
      let ttfb = 0;
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        if (!ttfb) ttfb = performance.now() - t;
        size += chunk.length;
      });
      res.on("end", () => resolve({ ttfb, total: performance.now() - t, bytes: size }));
    })
      .on("error", reject)
      .end();
  });
}

const first = await measure(url);
const warmRuns: { ttfb: number; total: number; bytes: number }[] = [];
for (let i = 0; i < 20; i++) warmRuns.push(await measure(url));
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1];
const warmP95 = p95(warmRuns.map((r) => r.total));
const warmMedian = [...warmRuns.map((r) => r.total)].sort((a, b) => a - b)[10];
// Readers who move through the path: each request another window of the warm session, so no
// kept page answers it (the index and the tree are warm; the entries are read, masked and rendered).
const total = Number(/data-total="(\d+)"/.exec(await (await fetch(url)).text())?.[1] ?? 0);
const windowRuns: number[] = [];
for (let i = 0; i < 20; i++) windowRuns.push((await measure(`${url}?before=${Math.max(1, total - 1 - i * 37)}`)).total);
const windowP95 = p95(windowRuns);
const windowMedian = [...windowRuns].sort((a, b) => a - b)[10];
const origin = new URL(url).origin;
const css = await measure(`${origin}/s/assets/style.css`);
const js = await measure(`${origin}/s/assets/app.js`);
const firstScreen = warmRuns[0].bytes + css.bytes + js.bytes;
await measure(`${url}/tree`);
const trees: { ttfb: number; total: number; bytes: number }[] = [];
for (let i = 0; i < 5; i++) trees.push(await measure(`${url}/tree`));
const tree = trees.sort((a, b) => a.total - b.total)[2];
const entries = (JSON.parse(await (await fetch(`${url}/tree`)).text()) as { ids: string[] }).ids.length;

const piOut = join(work, "pi-export.html");
const t = performance.now();
execFileSync(
  process.execPath,
  [
    new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/cli.js", import.meta.url).pathname,
    "--export",
    file,
    piOut,
  ],
  {
    stdio: "ignore",
    env: { ...process.env, PI_CODING_AGENT_DIR: join(work, "pi-agent") },
  },
);
const piMs = performance.now() - t;
const piBytes = statSync(piOut).size;
await server.close();
rmSync(work, { recursive: true, force: true });

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MB`;
console.log(`session: ${mb(bytes.length)}`);
console.log(`pi --export: ${piMs.toFixed(0)} ms to the whole file, ${mb(piBytes)}`);
const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
console.log(`pisync share page, first request: ${first.total.toFixed(0)} ms, ${kb(first.bytes)} (gzip)`);
console.log(
  `pisync share page, warm: p95 ${warmP95.toFixed(0)} ms, median ${warmMedian.toFixed(0)} ms of 20 requests (target: p95 ≤ 150 ms)`,
);
console.log(
  `pisync share page, another window each time (nothing kept to serve): p95 ${windowP95.toFixed(0)} ms, median ${windowMedian.toFixed(0)} ms of 20 requests`,
);
console.log(
  `first screen: HTML ${kb(warmRuns[0].bytes)} + CSS ${kb(css.bytes)} + JS ${kb(js.bytes)} = ${kb(firstScreen)} on the wire (gzip; target ≤ 300 KB)`,
);
console.log(
  `tree of ${entries} entries (loaded after the first screen): ${tree.total.toFixed(0)} ms, ${kb(tree.bytes)}`,
);
console.log(
  `ratios to pi's export: warm p95 ${(warmP95 / piMs).toFixed(3)}× its time, first screen ${(firstScreen / piBytes).toFixed(4)}× its bytes, first screen + tree ${((firstScreen + tree.bytes) / piBytes).toFixed(3)}×`,
);

await freshShareBench(bytes, id);
