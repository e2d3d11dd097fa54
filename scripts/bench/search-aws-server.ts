/**
 * An append made searchable through the one-machine server, on S3 + DynamoDB (`npm start --
 * --store aws`, against DynamoDB Local and s3rver behind the SigV4 gate) and on the embedded
 * store as the baseline of the same run: a library of SESSIONS sessions (stored straight through
 * core's `Appender`, then indexed by the server's start-up catch-up), then APPENDS appends of one
 * line through `PATCH /v1/sessions/:id`, each timed from the request until `GET /v1/search`
 * (asked every 20 ms) finds its word. Prints p50 / p95 / max per store and their ratio: for the
 * appends made right after the catch-up (the last folds and steps still running: the search
 * threads' copies far behind the writer's) and for those made after a pause.
 *
 * Usage: node --conditions=source --import tsx scripts/bench/search-aws-server.ts [SESSIONS=1000] [APPENDS=20]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Appender } from "@pisync/core";
import type { Stores } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { startNodeServer } from "../../functions/api/src/node.js";
import { openEmbedded } from "../../functions/api/src/node-stores.js";
import { withAwsServers } from "./aws-servers.js";
import { seeded } from "./generate-session.js";

const SESSIONS = Number(process.argv[2] ?? 1000);
const APPENDS = Number(process.argv[3] ?? 20);
/** The pause after the library is searchable, before the appends (the last steps and folds end). */
const SETTLE_MS = 10_000;
/** The user `npm start` makes on its first start (the sessions are stored under it beforehand). */
const USER = "local";
const random = seeded(7);
const SYLLABLES = "ka lo mi ne ru sa ti vo ze pa qu do fe gi ha ju ly mo nu ox".split(" ");
const VOCABULARY = Array.from({ length: 20_000 }, () =>
  Array.from({ length: 2 + Math.floor(random() * 3) }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(
    "",
  ),
);
const prose = (words: number) =>
  Array.from({ length: words }, () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)]).join(" ");

/** A session of 40 user turns of 200 words (about 54 KB), its first turn naming it (`mark<i>`). */
function session(i: number): Uint8Array {
  const id = `s-${i}`;
  const at = Date.parse("2026-01-01") + i * 60_000;
  const lines: unknown[] = [
    { type: "session", version: 3, id, timestamp: new Date(at).toISOString(), cwd: "/home/dev/p" },
  ];
  let parentId: string | null = null;
  for (let t = 0; t < 40; t++) {
    const entryId = `${i.toString(16).padStart(4, "0")}${t.toString(16).padStart(4, "0")}`;
    const content = `${t === 0 ? `mark${i} ` : ""}${prose(200)}`;
    lines.push({
      type: "message",
      id: entryId,
      parentId,
      timestamp: new Date(at + t * 1000).toISOString(),
      message: { role: "user", content, timestamp: at },
    });
    parentId = entryId;
  }
  return new TextEncoder().encode(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
}

/** Stores the library straight into `stores`; answers each session's length. */
async function storeLibrary(stores: Stores): Promise<number[]> {
  const appender = new Appender(stores);
  const lengths: number[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const body = session(i);
    await appender.append({ userId: USER, sessionId: `s-${i}`, offset: 0, body });
    lengths.push(body.length);
  }
  return lengths;
}

/** Asks `/v1/search` every 20 ms until it finds `word`; answers the time it took (ms). Each search's own time goes in `each`. */
async function searchable(
  base: string,
  auth: Record<string, string>,
  word: string,
  limitMs: number,
  each?: number[],
): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const asked = performance.now();
    const response = await fetch(`${base}/v1/search?q=${word}`, { headers: auth });
    const page = (await response.json()) as { sessions?: unknown[] };
    each?.push(performance.now() - asked);
    if (response.status === 200 && (page.sessions?.length ?? 0) > 0) return performance.now() - t0;
    if (performance.now() - t0 > limitMs) throw new Error(`${word} was not found within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts the server on `dataDir` (and `aws` when given), waits for the library, times the appends. */
async function measure(dataDir: string, lengths: number[], aws?: Parameters<typeof awsStores>[0]) {
  const server = await startNodeServer({ dataDir, host: "127.0.0.1", port: 0, aws, log: () => {} });
  try {
    const auth = { Authorization: `Bearer ${server.token}` };
    // Until the start-up catch-up is done: every hundredth session and the last one searchable,
    // then a pause (appends measured during a bulk indexing would wait behind it).
    const t0 = performance.now();
    // Each search's own time while the catch-up indexes: what a user searching meanwhile waits.
    const during: number[] = [];
    for (let i = 0; i < SESSIONS; i += 100) await searchable(server.url, auth, `mark${i}`, 900_000, during);
    await searchable(server.url, auth, `mark${SESSIONS - 1}`, 900_000, during);
    const caughtUp = performance.now() - t0;
    const early = await appendsUntilFound(server.url, auth, lengths, 0);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const times = await appendsUntilFound(server.url, auth, lengths, APPENDS);
    return { caughtUp, during: during.sort((a, b) => a - b), early, times };
  } finally {
    await server.close();
  }
}

/** APPENDS appends of one line to random sessions, each timed until a search finds it (sorted, ms). */
async function appendsUntilFound(
  url: string,
  auth: Record<string, string>,
  lengths: number[],
  first: number,
): Promise<number[]> {
  const times: number[] = [];
  for (let k = first; k < first + APPENDS; k++) {
    const i = Math.floor(random() * SESSIONS);
    const line = `${JSON.stringify({ type: "message", id: `zz${k.toString(16).padStart(6, "0")}`, parentId: null, timestamp: "2026-02-01T00:00:00.000Z", message: { role: "user", content: `a fresh ocelot${k} ${prose(20)}`, timestamp: 1 } })}\n`;
    const t0 = performance.now();
    const response = await fetch(`${url}/v1/sessions/s-${i}`, {
      method: "PATCH",
      headers: { ...auth, "Upload-Offset": String(lengths[i]), "Content-Type": "application/x-ndjson" },
      body: line,
    });
    if (response.status !== 200) throw new Error(`append ${k}: ${response.status} ${await response.text()}`);
    lengths[i] = (lengths[i] as number) + Buffer.byteLength(line);
    await searchable(url, auth, `ocelot${k}`, 30_000);
    times.push(performance.now() - t0);
    // Appends a human pace apart, not one drain's batch.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return times.sort((a, b) => a - b);
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const show = (times: number[]) =>
  `p50 ${quantile(times, 0.5).toFixed(0)} ms, p95 ${quantile(times, 0.95).toFixed(0)} ms, max ${(times.at(-1) ?? 0).toFixed(0)} ms`;

const dir = mkdtempSync(join(tmpdir(), "pisync-bench-search-aws-server-"));
try {
  const embeddedDir = join(dir, "embedded");
  const local = openEmbedded(embeddedDir);
  const embeddedLengths = await storeLibrary(local.stores);
  local.close();
  const embedded = await measure(embeddedDir, embeddedLengths);
  await withAwsServers(async (config) => {
    const lengths = await storeLibrary(awsStores(config));
    const aws = await measure(join(dir, "aws"), lengths, config);
    console.log(
      `${SESSIONS} sessions of ${(session(0).length / 1000).toFixed(0)} KB; the start-up catch-up made them searchable in ${(embedded.caughtUp / 1000).toFixed(1)} s (embedded), ${(aws.caughtUp / 1000).toFixed(1)} s (aws)`,
    );
    console.log(
      `a search during the start-up catch-up: embedded ${show(embedded.during)} (${embedded.during.length}); aws ${show(aws.during)} (${aws.during.length})`,
    );
    console.log(
      `right after the catch-up, an append made searchable (${APPENDS} appends): embedded ${show(embedded.early)}; aws ${show(aws.early)}`,
    );
    console.log(`an append made searchable through npm start (${APPENDS} appends): embedded ${show(embedded.times)}`);
    console.log(`an append made searchable through npm start --store aws: ${show(aws.times)}`);
    const p95 = (times: number[]) => quantile(times, 0.95);
    console.log(`aws / embedded at p95: ${(p95(aws.times) / p95(embedded.times)).toFixed(2)}×`);
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
