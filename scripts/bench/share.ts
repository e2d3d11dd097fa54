/**
 * Share benchmark (issue: share links): time to first byte and bytes sent for the 40 MB
 * session's share page, against pi's own HTML export of the same file (`pi --export`), in
 * the same run. pi's export is a file written locally (its time is the whole export); ours is
 * a page served over HTTP from the one-machine server (its first and later requests).
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

/** Time to first byte and total bytes of a GET, with node:http (no client-side buffering games). */
function measure(target: string): Promise<{ ttfb: number; total: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    request(target, (res) => {
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
const later: { ttfb: number; total: number; bytes: number }[] = [];
for (let i = 0; i < 5; i++) later.push(await measure(url));
later.sort((a, b) => a.ttfb - b.ttfb);
const warm = later[2];

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
console.log(`pisync share page, first request: TTFB ${first.ttfb.toFixed(0)} ms, ${mb(first.bytes)}`);
console.log(`pisync share page, later requests: TTFB ${warm.ttfb.toFixed(0)} ms, ${mb(warm.bytes)}`);
console.log(
  `ratios to pi's export: first TTFB ${(first.ttfb / piMs).toFixed(2)}×, later TTFB ${(warm.ttfb / piMs).toFixed(2)}×, bytes ${(warm.bytes / piBytes).toFixed(3)}×`,
);
