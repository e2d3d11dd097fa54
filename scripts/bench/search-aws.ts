/**
 * Search benchmark, AWS adapter against the embedded one, in the same run, on one generated
 * library stored in the AWS stores (DynamoDB Local, s3rver behind the SigV4 gate):
 * - initial indexing from the stored bytes (rebuild): the AWS adapter publishes one file per
 *   drain step of 64 sessions (upload + conditional pointer write) as the reindex event does,
 *   and one per session when the core indexer syncs session by session;
 * - warm search latency p50/p95/p99 (same queries), and a cold one (a fresh instance: the
 *   pointer read and the file's download included);
 * - an append made searchable by the next search (the Lambda path: its mark, then a search that
 *   indexes the user's marks first);
 * - the index object's size against the text it indexes.
 *
 * Usage: node --conditions=source --import tsx scripts/bench/search-aws.ts [SESSIONS=300]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Appender, SearchIndexer, storedLines } from "@pisync/core";
import { batchOf, parseQuery, type SearchIndex } from "@pisync/search";
import { S3SearchIndex, SearchMarks } from "@pisync/search/aws";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { awsStores } from "@pisync/store/aws";
import { lambdaSearch, MarkingIndexer } from "../../functions/api/src/lambda-search.js";
import { withAwsServers } from "./aws-servers.js";
import { seeded } from "./generate-session.js";

const SESSIONS = Number(process.argv[2] ?? 300);
const USER = "bench";
const random = seeded(23);
const SYLLABLES = "ka lo mi ne ru sa ti vo ze pa qu do fe gi ha ju ly mo nu ox".split(" ");
const VOCABULARY = Array.from({ length: 20_000 }, () =>
  Array.from({ length: 2 + Math.floor(random() * 3) }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(
    "",
  ),
);
const word = () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)] as string;
const prose = (words: number) => Array.from({ length: words }, word).join(" ");

/** A session of user and assistant turns, as JSONL bytes. */
function session(id: string, at: number): Uint8Array {
  const lines = [
    { type: "session", version: 3, id, timestamp: new Date(at).toISOString(), cwd: `/home/dev/p${at % 7}` },
  ];
  let parentId: string | null = null;
  const turns = 4 + Math.floor(random() * 12);
  for (let t = 0; t < turns; t++) {
    const entryId = `${id.slice(-4)}${t.toString(16).padStart(4, "0")}`;
    const role = t % 2 ? "assistant" : "user";
    const text = prose(30 + Math.floor(random() * 200));
    const message =
      role === "user"
        ? { role, content: text, timestamp: at }
        : {
            role,
            content: [{ type: "text", text }],
            api: "x",
            provider: "p",
            model: "m",
            stopReason: "stop",
            timestamp: at,
            usage: {
              input: 1,
              output: 1,
              cacheRead: 0,
              cacheWrite: 0,
              totalTokens: 2,
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
            },
          };
    lines.push({
      type: "message",
      id: entryId,
      parentId,
      timestamp: new Date(at + t * 1000).toISOString(),
      message,
    } as never);
    parentId = entryId;
  }
  return new TextEncoder().encode(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function latencies(index: SearchIndex, queries: string[]): Promise<number[]> {
  for (const q of queries.slice(0, 20)) await index.search(USER, parseQuery(q), { limit: 20 }); // warm
  const times: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    await index.search(USER, parseQuery(q), { limit: 20 });
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}

const dir = mkdtempSync(join(tmpdir(), "pisync-bench-search-aws-"));
try {
  await withAwsServers(async (config) => {
    const stores = awsStores(config);
    const appender = new Appender(stores);
    const library = Array.from({ length: SESSIONS }, (_, i) => ({
      id: `bench-${i}`,
      bytes: session(`bench-${i}`, Date.parse("2026-01-01") + i * 60_000),
    }));
    for (const { id, bytes } of library) await appender.append({ userId: USER, sessionId: id, offset: 0, body: bytes });
    const totalBytes = library.reduce((n, s) => n + s.bytes.length, 0);
    let textBytes = 0;
    for (const { id, bytes } of library) {
      for (const doc of batchOf(bytes, { userId: USER, sessionId: id, generation: 1, from: 0 }).documents)
        textBytes += Buffer.byteLength(doc.text);
    }
    console.log(
      `library: ${SESSIONS} sessions, ${(totalBytes / 1e6).toFixed(1)} MB, ${(textBytes / 1e6).toFixed(1)} MB of text`,
    );

    const lines = storedLines(stores);
    const embedded = new SqliteSearchIndex(join(dir, "embedded.sqlite"), lines);
    const aws = new S3SearchIndex({
      connection: config,
      table: config.table,
      blobs: stores.blobs,
      lines,
      cacheDir: join(dir, "cache"),
    });
    const timed = async (work: () => Promise<void>) => {
      const t0 = performance.now();
      await work();
      return (performance.now() - t0) / 1000;
    };
    const marks = new SearchMarks(config, config.table);
    // Embedded: the one-machine rebuild. AWS: the reindex event's (drains of 64 sessions, one
    // file published per drain step), and the session-by-session sync (one file per session).
    const embeddedSeconds = await timed(() => new SearchIndexer(stores, embedded).rebuild([USER]));
    const awsSeconds = await timed(() => new MarkingIndexer(stores, aws, marks).rebuildUsers([USER]));
    const perSessionSeconds = await timed(() => new SearchIndexer(stores, aws).rebuild([USER]));
    console.log(
      `initial indexing of ${(totalBytes / 1e6).toFixed(1)} MB: embedded ${embeddedSeconds.toFixed(1)} s; aws ${awsSeconds.toFixed(1)} s in drains (${(awsSeconds / embeddedSeconds).toFixed(2)}× the embedded), ${perSessionSeconds.toFixed(1)} s session by session (${(perSessionSeconds / embeddedSeconds).toFixed(2)}×)`,
    );
    const [key] = await stores.blobs.list(`search/${USER}/`);
    const objectBytes = (await stores.blobs.get(key as string)).length;
    console.log(
      `index object: ${(objectBytes / 1e6).toFixed(1)} MB for ${(textBytes / 1e6).toFixed(1)} MB of text: ${(objectBytes / textBytes).toFixed(2)}× (embedded file ${(statSync(join(dir, "embedded.sqlite")).size / textBytes).toFixed(2)}×)`,
    );

    const queries = Array.from(
      { length: 200 },
      (_, i) => [word(), `${word()} ${word()}`, `${word().slice(0, 4)}*`, `"${word()} ${word()}"`][i % 4] as string,
    );
    const e = await latencies(embedded, queries);
    const a = await latencies(aws, queries);
    console.log(
      `search (warm, ${queries.length} queries): embedded p50 ${ms(quantile(e, 0.5))} p95 ${ms(quantile(e, 0.95))} p99 ${ms(quantile(e, 0.99))}; aws p50 ${ms(quantile(a, 0.5))} p95 ${ms(quantile(a, 0.95))} p99 ${ms(quantile(a, 0.99))} (p95 ${(quantile(a, 0.95) / quantile(e, 0.95)).toFixed(2)}× the embedded)`,
    );

    const cold = new S3SearchIndex({
      connection: config,
      table: config.table,
      blobs: stores.blobs,
      lines,
      cacheDir: join(dir, "cold"),
    });
    let t0 = performance.now();
    await cold.search(USER, parseQuery(word()), { limit: 20 });
    console.log(`search (cold instance: pointer, download, first query): ${ms(performance.now() - t0)}`);

    // The Lambda path: an append leaves a mark; the next search indexes it first.
    const indexer = new MarkingIndexer(stores, cold, marks);
    const { index: searching } = lambdaSearch(cold, indexer);
    const last = library[0] as { id: string; bytes: Uint8Array };
    const line = `${JSON.stringify({ type: "message", id: "zz000001", parentId: null, timestamp: "2026-02-01T00:00:00.000Z", message: { role: "user", content: "a freshly appended ocelot", timestamp: 1 } })}\n`;
    await appender.append({
      userId: USER,
      sessionId: last.id,
      offset: last.bytes.length,
      body: new TextEncoder().encode(line),
    });
    indexer.markDirty(USER, last.id);
    await indexer.settle();
    t0 = performance.now();
    const page = await searching.search(USER, parseQuery("ocelot"), { limit: 20 });
    const caughtUp = performance.now() - t0;
    const t1 = performance.now();
    await searching.search(USER, parseQuery("ocelot"), { limit: 20 });
    console.log(
      `append then search: ${page.sessions.length} hit, the search that indexed its mark first took ${ms(caughtUp)} (the next one ${ms(performance.now() - t1)}): one upload of the ${(objectBytes / 1e6).toFixed(1)} MB file`,
    );
    embedded.close();
    aws.close();
    cold.close();
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
