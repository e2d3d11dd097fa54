/**
 * Search benchmark, AWS adapter against the embedded one, in the same run, on one generated
 * library stored in the AWS stores (DynamoDB Local, s3rver behind the SigV4 gate):
 * - initial indexing from the stored bytes as on Lambda: the reindex event marks every session,
 *   then a chain of invocations of the default budget, each started as the last one ends,
 *   indexes the marks in bounded steps (count, longest, total); each step is one log entry,
 *   folded into the chunked base past the log's threshold;
 * - the base's size against the text it indexes, and the bytes uploaded;
 * - warm search latency p50/p95/p99 (same queries; the answers compared with the embedded
 *   adapter's), and fresh instances' first searches (pointer, manifest, the chunks the query
 *   touches), with the bytes they fetched;
 * - appends made searchable by the next search (the Lambda path: a mark, then a search that
 *   indexes the user's marks first): latency p50/p95, and bytes uploaded per append with the
 *   folds of the scheduled pass that runs after each one (another instance);
 * - local disk of the copies and the process's peak memory.
 *
 * Usage: node --conditions=source --import tsx scripts/bench/search-aws.ts [SESSIONS=300] [CHUNK_KIB=128] [TEXT_SCALE=1] [EAGER_MIB=16]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Appender, SearchIndexer, storedLines } from "@pisync/core";
import { batchOf, parseQuery, type SearchIndex } from "@pisync/search";
import { type CompactionReport, decodeManifest, S3SearchIndex, SearchMarks } from "@pisync/search/aws";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import type { BlobStore } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { lambdaSearch } from "../../functions/api/src/lambda-search.js";
import { INDEX_BUDGET_MS, MarkingIndexer } from "../../functions/api/src/marking-indexer.js";
import { withAwsServers } from "./aws-servers.js";
import { seeded } from "./generate-session.js";

const SESSIONS = Number(process.argv[2] ?? 300);
const CHUNK_KIB = Number(process.argv[3] ?? 128);
/** Words per turn, times this (a library whose sessions hold more text). */
const TEXT_SCALE = Number(process.argv[4] ?? 1);
/** Fresh instances measured each way (`PISYNC_BENCH_FRESH`): fewer on a large library, where each one may fetch much. */
const COLD_INSTANCES = Number(process.env.PISYNC_BENCH_FRESH ?? 20);
/** Bases up to this size are fetched whole by a fresh instance (the adapter's default: 16 MiB). */
const EAGER_MIB = Number(process.argv[5] ?? 16);
/** Appends made searchable (`PISYNC_BENCH_APPENDS`): 560 see a whole cycle of folds (16 patches, then their merge). */
const APPENDS = Number(process.env.PISYNC_BENCH_APPENDS ?? 60);
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
    const text = prose(Math.round((30 + Math.floor(random() * 200)) * TEXT_SCALE));
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
const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
const kb = (n: number) => `${(n / 1e3).toFixed(1)} kB`;
const percentiles = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return `p50 ${ms(quantile(sorted, 0.5))} p95 ${ms(quantile(sorted, 0.95))} p99 ${ms(quantile(sorted, 0.99))}`;
};

/** The bucket through a counter of the bytes each way. */
function counting(blobs: BlobStore) {
  const counted = { up: 0, down: 0, gets: 0 };
  const wrapped: BlobStore = {
    ...blobs,
    put: async (key, body) => {
      counted.up += body.length;
      return blobs.put(key, body);
    },
    get: async (key, range) => {
      const bytes = await blobs.get(key, range);
      counted.down += bytes.length;
      counted.gets++;
      return bytes;
    },
    delete: (keys) => blobs.delete(keys),
    list: (prefix) => blobs.list(prefix),
    listObjects: (prefix) => blobs.listObjects(prefix),
    uploadUrl: (key, expires, max) => blobs.uploadUrl(key, expires, max),
  };
  return { blobs: wrapped, counted };
}

/** Answers of every query (warmed first), with their latencies. */
async function latencies(index: SearchIndex, queries: string[]) {
  for (const q of queries.slice(0, 20)) await index.search(USER, parseQuery(q), { limit: 20 }); // warm
  const times: number[] = [];
  const answers: string[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    const page = await index.search(USER, parseQuery(q), { limit: 20 });
    times.push(performance.now() - t0);
    answers.push(JSON.stringify(page));
  }
  return { times, answers };
}

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50);
const dir = mkdtempSync(join(tmpdir(), "pisync-bench-search-aws-"));
try {
  await withAwsServers(async (config) => {
    const stores = awsStores(config);
    const appender = new Appender(stores);
    const library = Array.from({ length: SESSIONS }, (_, i) => ({
      id: `bench-${i}`,
      bytes: session(`bench-${i}`, Date.parse("2026-01-01") + i * 60_000),
    }));
    const storing = performance.now();
    for (const [i, { id, bytes }] of library.entries()) {
      await appender.append({ userId: USER, sessionId: id, offset: 0, body: bytes });
      if ((i + 1) % 1000 === 0)
        console.error(`stored ${i + 1} sessions in ${((performance.now() - storing) / 1000).toFixed(0)} s`);
    }
    const totalBytes = library.reduce((n, s) => n + s.bytes.length, 0);
    let textBytes = 0;
    for (const { id, bytes } of library) {
      for (const doc of batchOf(bytes, { userId: USER, sessionId: id, generation: 1, from: 0 }).documents)
        textBytes += Buffer.byteLength(doc.text);
    }
    console.log(
      `library: ${SESSIONS} sessions, ${mb(totalBytes)}, ${mb(textBytes)} of text; chunks of ${CHUNK_KIB} KiB`,
    );

    const lines = storedLines(stores);
    const compactions: CompactionReport[] = [];
    const open = (blobs: BlobStore, cacheDir: string, hotPages?: boolean) =>
      new S3SearchIndex({
        hotPages,
        connection: config,
        table: config.table,
        blobs,
        lines,
        cacheDir: join(dir, cacheDir),
        chunkBytes: CHUNK_KIB * 1024,
        eagerBytes: EAGER_MIB * 1024 * 1024,
        onCompaction: (report) => compactions.push(report),
      });
    const embedded = new SqliteSearchIndex(join(dir, "embedded.sqlite"), lines);
    const writer = counting(stores.blobs);
    const aws = open(writer.blobs, "writer");
    // Each drain step (one applyAll) is what one invocation of the reindex would do at most.
    const steps: number[] = [];
    const applyAll = aws.applyAll.bind(aws);
    aws.applyAll = async (batches) => {
      const t0 = performance.now();
      try {
        return await applyAll(batches);
      } finally {
        steps.push(performance.now() - t0);
      }
    };
    const timed = async (work: () => Promise<void>) => {
      const t0 = performance.now();
      await work();
      return (performance.now() - t0) / 1000;
    };
    const marks = new SearchMarks(config, config.table);
    const embeddedSeconds = await timed(() => new SearchIndexer(stores, embedded).rebuild([USER]));
    // As on Lambda: the reindex event marks, then scheduled invocations of the default budget index the marks.
    const rebuilder = new MarkingIndexer(stores, aws, marks);
    const invocations: number[] = [];
    const awsSeconds = await timed(async () => {
      const t0 = performance.now();
      await rebuilder.rebuildUsers([USER]);
      invocations.push(performance.now() - t0);
      // As a chain of passes: each one's continuation starts the next at once, until no mark is due.
      for (let more = true; more; ) {
        const t1 = performance.now();
        more = (await rebuilder.catchUpMarked(INDEX_BUDGET_MS)).more;
        invocations.push(performance.now() - t1);
      }
    });
    await aws.compact(USER);
    console.log(
      `initial indexing of ${mb(totalBytes)} as bounded invocations (budget ${INDEX_BUDGET_MS / 1000} s): ${invocations.length} invocations (the reindex event's ${ms(invocations[0] ?? 0)} included), longest ${ms(Math.max(...invocations))}, total ${awsSeconds.toFixed(1)} s`,
    );
    console.log(
      `initial indexing of ${mb(totalBytes)}: embedded ${embeddedSeconds.toFixed(1)} s; aws ${awsSeconds.toFixed(1)} s (${(awsSeconds / embeddedSeconds).toFixed(2)}×) in ${steps.length} index steps (${(steps.reduce((n, t) => n + t, 0) / 1000).toFixed(1)} s in all), longest ${ms(Math.max(...steps))}; ${compactions.length} compactions (${compactions.filter((c) => c.kind === "patch").length} patches; ${(compactions.reduce((n, c) => n + c.ms, 0) / 1000).toFixed(1)} s, ${mb(compactions.reduce((n, c) => n + c.uploaded, 0))}), longest ${ms(Math.max(...compactions.map((c) => c.ms)))}; uploaded ${mb(writer.counted.up)}`,
    );
    const pointer = await aws.pointers.get(USER);
    const manifest = pointer?.base ? decodeManifest(await stores.blobs.get(pointer.base.key)) : undefined;
    const baseBytes = manifest?.length ?? 0;
    const hotBytes = manifest?.hot ? (await stores.blobs.get(manifest.hot)).length : 0;
    console.log(`hot pages (fetched with the first chunk): ${mb(hotBytes)}`);
    console.log(
      `index base: ${mb(baseBytes)} in ${manifest?.chunks.length} chunks for ${mb(textBytes)} of text: ${(baseBytes / textBytes).toFixed(2)}× (embedded file ${(statSync(join(dir, "embedded.sqlite")).size / textBytes).toFixed(2)}×)`,
    );

    const queries = Array.from(
      { length: 200 },
      (_, i) => [word(), `${word()} ${word()}`, `${word().slice(0, 4)}*`, `"${word()} ${word()}"`][i % 4] as string,
    );
    const e = await latencies(embedded, queries);
    const a = await latencies(aws, queries);
    const differing = queries.filter((_, i) => a.answers[i] !== e.answers[i]);
    const differ = differing.length;
    console.log(
      `search (warm, ${queries.length} queries): embedded ${percentiles(e.times)}; aws ${percentiles(a.times)}; answers that differ: ${differ}${differ ? ` (${differing.slice(0, 3).join(", ")})` : ""}`,
    );

    // Fresh instances: each one's first search, on its own empty cache; with the base's hot pages
    // and the words' leaves fetched at once (now), and without (before), taking turns.
    const firsts = {
      before: { cold: [] as number[], fetched: [] as number[], differ: 0 },
      now: { cold: [] as number[], fetched: [] as number[], differ: 0 },
    };
    for (let i = 0; i < COLD_INSTANCES; i++) {
      for (const [name, hot] of [
        ["before", false],
        ["now", true],
      ] as const) {
        const reader = counting(stores.blobs);
        const fresh = open(reader.blobs, `cold-${name}-${i}`, hot);
        const t0 = performance.now();
        const page = await fresh.search(USER, parseQuery(queries[i % queries.length] as string), { limit: 20 });
        firsts[name].cold.push(performance.now() - t0);
        firsts[name].fetched.push(reader.counted.down);
        if (JSON.stringify(page) !== e.answers[i % queries.length]) firsts[name].differ++;
        fresh.close();
      }
    }
    for (const [name, { cold, fetched, differ }] of Object.entries(firsts)) {
      fetched.sort((x, y) => x - y);
      console.log(
        `search (fresh instance's first, ${COLD_INSTANCES} instances, ${name === "now" ? "hot pages and words' leaves at once" : "before: as missed"}): ${percentiles(cold)}; fetched p50 ${mb(quantile(fetched, 0.5))} max ${mb(fetched.at(-1) as number)} of the ${mb(baseBytes)} base; answers that differ: ${differ}`,
      );
    }

    // The Lambda path: an append leaves a mark; the next search indexes it first. The scheduled
    // pass (another instance) runs after each one, as it would every minute: it folds the log when due.
    const searcher = counting(stores.blobs);
    const lambdaIndex = open(searcher.blobs, "lambda");
    const indexer = new MarkingIndexer(stores, lambdaIndex, marks);
    const passer = counting(stores.blobs);
    const passIndex = open(passer.blobs, "pass");
    const scheduled = new MarkingIndexer(stores, passIndex, marks);
    const passes: number[] = [];
    /** Per append, what its search and the pass after it did (the slowest are printed). */
    const detail: Array<{
      i: number;
      search: number;
      pass: number;
      gets: [number, number];
      down: [number, number];
      folds: string;
    }> = [];
    const { index: searching } = lambdaSearch(lambdaIndex, indexer);
    await searching.search(USER, parseQuery("warm"), { limit: 20 });
    const offsets = new Map(library.map((s) => [s.id, s.bytes.length]));
    const made: number[] = [];
    const uploads: number[] = [];
    let appended = 0;
    compactions.length = 0;
    for (let i = 0; i < APPENDS; i++) {
      const target = library[Math.floor(random() * library.length)] as { id: string };
      const line = `${JSON.stringify({ type: "message", id: `zz${i.toString(16).padStart(6, "0")}`, parentId: null, timestamp: "2026-02-01T00:00:00.000Z", message: { role: "user", content: `a freshly appended ocelot${i} ${prose(40)}`, timestamp: 1 } })}\n`;
      const body = new TextEncoder().encode(line);
      const offset = offsets.get(target.id) as number;
      await appender.append({ userId: USER, sessionId: target.id, offset, body });
      offsets.set(target.id, offset + body.length);
      appended += body.length;
      indexer.markDirty(USER, target.id);
      await indexer.settle();
      searcher.counted.up = 0;
      const before = { gets: searcher.counted.gets, down: searcher.counted.down, folds: compactions.length };
      const t0 = performance.now();
      const page = await searching.search(USER, parseQuery(`ocelot${i}`), { limit: 20 });
      made.push(performance.now() - t0);
      if (page.sessions[0]?.sessionId !== target.id) throw new Error(`append ${i} was not found by the next search`);
      passer.counted.up = 0;
      const passBefore = { gets: passer.counted.gets, down: passer.counted.down };
      const t1 = performance.now();
      await scheduled.catchUpMarked(INDEX_BUDGET_MS);
      passes.push(performance.now() - t1);
      uploads.push(searcher.counted.up + passer.counted.up);
      detail.push({
        i,
        search: made.at(-1) as number,
        pass: passes.at(-1) as number,
        gets: [searcher.counted.gets - before.gets, passer.counted.gets - passBefore.gets],
        down: [searcher.counted.down - before.down, passer.counted.down - passBefore.down],
        folds: compactions
          .slice(before.folds)
          .map((c) => `${c.kind} ${ms(c.ms)}`)
          .join(" + "),
      });
    }
    const show = (d: (typeof detail)[number]) =>
      `#${d.i} search ${ms(d.search)} (${d.gets[0]} GETs, ${mb(d.down[0])}), pass ${ms(d.pass)} (${d.gets[1]} GETs, ${mb(d.down[1])}${d.folds ? `; ${d.folds}` : ""})`;
    console.log(
      `slowest passes: ${[...detail]
        .sort((x, y) => y.pass - x.pass)
        .slice(0, 4)
        .map(show)
        .join("; ")}`,
    );
    console.log(
      `slowest searches after an append: ${[...detail]
        .sort((x, y) => y.search - x.search)
        .slice(0, 4)
        .map(show)
        .join("; ")}`,
    );
    const sortedUploads = [...uploads].sort((x, y) => x - y);
    console.log(
      `append then search (${APPENDS} appends of ${(appended / APPENDS / 1000).toFixed(1)} kB): ${percentiles(made)}; uploaded per append, with the scheduled pass's folds, p50 ${kb(quantile(sortedUploads, 0.5))} max ${kb(sortedUploads.at(-1) as number)} mean ${kb(uploads.reduce((n, u) => n + u, 0) / APPENDS)} (${compactions.length} folds among them, ${compactions.map((c) => `${c.kind} ${ms(c.ms)} ${mb(c.uploaded)}`).join(", ")}); the scheduled pass after each: longest ${ms(Math.max(...passes))}`,
    );
    console.log(
      `local copies: writer ${mb(aws.localBytes(USER))}, the Lambda instance ${mb(lambdaIndex.localBytes(USER))}; peak RSS ${mb(peakRss)}`,
    );
    embedded.close();
    aws.close();
    lambdaIndex.close();
    passIndex.close();
  });
} finally {
  clearInterval(sampler);
  rmSync(dir, { recursive: true, force: true });
}
