/**
 * Search benchmark (issue: your library), embedded adapter:
 * - a generated library: SESSIONS sessions, MEGABYTES in all (by default 200 KB a session, the
 *   shape of the 10,000-session / 2 GB target), written by pi's own SessionManager (user turns,
 *   assistant turns with thinking and tool calls, tool results), words from a 20,000-word
 *   pseudo-vocabulary so that phrases are rare, as in real text. It is made once into a cache
 *   folder in the system's temp folder (with a store holding it, one upload per session) and
 *   reused by later runs with the same arguments; files are read one at a time;
 * - ingest throughput through the append protocol (appends of ~10 lines) on the library's first
 *   INGEST_MB, without indexing (the baseline, same run) and with the server's background
 *   indexing (dirty sessions drained in batches), counted until all is searchable: ratio
 *   (target ≥ 0.70);
 * - initial indexing throughput of the whole library from the stored bytes (rebuild);
 * - index size against the text it indexes (target ≤ 0.6×);
 * - warm search latency p50/p95/p99 over mixed queries (targets p95 ≤ 300 ms, p99 ≤ 1 s), wall
 *   and CPU time, with the adapter's bounds and, in turn on the same queries, without the
 *   prefix bound (the baseline);
 * - recall: exact phrases sampled from random entries find their session (target 100 %); an
 *   absent phrase finds nothing.
 *
 * Usage: npm run bench:search [-- SESSIONS=1000 [SAMPLES=1000 [MEGABYTES=SESSIONS/5 [INGEST_MB=15]]]]
 * [--reuse-index] (`-- 10000` is the issue's scale). PISYNC_BENCH_CACHE sets the cache folder.
 * `--reuse-index`: search alone (no ingest), on an index kept in the cache beside the library
 * (built on the first such run, named by the index's layout version).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { Appender, SearchIndexer, storedLines } from "@pisync/core";
import { batchOf, parseQuery, type SearchIndex } from "@pisync/search";
import { INDEX_LAYOUT, SqliteSearchIndex } from "@pisync/search/embedded";
import { ThreadedSearchIndex } from "@pisync/search/embedded-threaded";
import { embeddedStores } from "@pisync/store/embedded";
import { seeded } from "./generate-session.js";

const options = process.argv.slice(2).filter((a) => a.startsWith("--"));
const numbers = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const SESSIONS = Number(numbers[0] ?? 1000);
const SAMPLES = Number(numbers[1] ?? 1000);
const MEGABYTES = Number(numbers[2] ?? SESSIONS / 5);
const INGEST_MB = Number(numbers[3] ?? 15);
/** Search alone: no ingest; the index is built once per library and index layout, then reused. */
const REUSE_INDEX = options.includes("--reuse-index");
const USER = "bench";
/** Bump when the library's shape or the store's layout changes: older caches are made again. */
const CACHE_VERSION = 2;

const random = seeded(16);
const SYLLABLES = "ka lo mi ne ru sa ti vo ze pa qu do fe gi ha ju ly mo nu ox".split(" ");
const VOCABULARY = Array.from({ length: 20_000 }, () =>
  Array.from({ length: 2 + Math.floor(random() * 3) }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(
    "",
  ),
);
/** Zipf-like: common words often, rare words rarely. */
const word = () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)];
const prose = (words: number) => Array.from({ length: words }, word).join(" ");

const usage = {
  input: 10,
  output: 5,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 15,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** A session of the library: where its file is (relative to the cache folder), its id and size. */
interface LibrarySession {
  file: string;
  id: string;
  bytes: number;
}

/** Writes one session with pi's SessionManager, turns added until it reaches about `target` bytes. */
function writeSession(i: number, dir: string, target: number): string {
  const sm = SessionManager.create(`/home/dev/project-${i % 40}`, dir);
  let clock = Date.parse("2026-01-01T00:00:00Z") + i * 60_000;
  let size = 0;
  for (let t = 0; t < 3 || size < target; t++) {
    clock += 5000;
    sm.appendMessage({ role: "user", content: prose(20 + Math.floor(random() * 60)), timestamp: clock });
    sm.appendMessage({
      role: "assistant",
      content: [
        { type: "thinking", thinking: prose(40 + Math.floor(random() * 80)) },
        { type: "text", text: prose(40 + Math.floor(random() * 150)) },
        { type: "toolCall", id: `call_${t}`, name: "bash", arguments: { command: `grep -r ${word()} src` } },
      ],
      api: "anthropic-messages",
      provider: "anthropic",
      model: i % 3 ? "claude-sonnet-4-5" : "gpt-5",
      usage,
      stopReason: "toolUse",
      timestamp: clock,
    } as never);
    sm.appendMessage({
      role: "toolResult",
      toolCallId: `call_${t}`,
      toolName: "bash",
      content: [{ type: "text", text: prose(30 + Math.floor(random() * 300)) }],
      isError: false,
      timestamp: clock,
    } as never);
    size = statSync(sm.getSessionFile() as string).size;
  }
  return sm.getSessionFile() as string;
}

/**
 * The library of this run's arguments: made (pi files, then a store holding each whole) into the
 * cache folder on the first run, read from it afterwards. The manifest is written last: a folder
 * without one was left by an interrupted run and is made again.
 */
async function library(): Promise<{ dir: string; sessions: LibrarySession[]; made: boolean }> {
  const cache = process.env.PISYNC_BENCH_CACHE ?? join(tmpdir(), "pisync-bench-search-cache");
  const dir = join(cache, `v${CACHE_VERSION}-${SESSIONS}-sessions-${MEGABYTES}-mb`);
  const manifest = join(dir, "library.json");
  if (existsSync(manifest)) return { dir, sessions: JSON.parse(readFileSync(manifest, "utf8")), made: false };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const stores = embeddedStores(join(dir, "store"));
  const appender = new Appender(stores);
  const sessions: LibrarySession[] = [];
  const average = (MEGABYTES * 1e6) / SESSIONS;
  try {
    for (let i = 0; i < SESSIONS; i++) {
      const path = writeSession(i, join(dir, "pi"), average * (0.5 + random()));
      const bytes = new Uint8Array(readFileSync(path));
      const id = (JSON.parse(new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(10)))) as { id: string }).id;
      await appender.append({ userId: USER, sessionId: id, offset: 0, body: bytes });
      sessions.push({ file: relative(dir, path), id, bytes: bytes.length });
    }
  } finally {
    stores.close();
  }
  writeFileSync(`${manifest}.part`, JSON.stringify(sessions));
  renameSync(`${manifest}.part`, manifest);
  return { dir, sessions, made: true };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (n: number) => `${n.toFixed(1)} ms`;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const mbps = (bytes: number, s: number) => bytes / 1e6 / s;

let started = performance.now();
const lib = await library();
const totalBytes = lib.sessions.reduce((n, s) => n + s.bytes, 0);
const read = (s: LibrarySession) => new Uint8Array(readFileSync(join(lib.dir, s.file)));
console.log(
  `library: ${lib.sessions.length} sessions, ${mb(totalBytes)} (written by pi's SessionManager and stored, ${lib.made ? `made in ${Math.round((performance.now() - started) / 1000)} s` : "from the cache"} in ${lib.dir})`,
);
const libraryStores = embeddedStores(join(lib.dir, "store"));
const root = mkdtempSync(join(tmpdir(), "pisync-bench-search-"));
try {
  if (!REUSE_INDEX) await measureIngest();
  const { indexPath, textBytes, indexBytes } = REUSE_INDEX
    ? await keptIndex()
    : await buildIndex(join(root, "search.sqlite"));
  console.log(
    `index size: ${mb(indexBytes)} for ${mb(textBytes)} of text: ${(indexBytes / textBytes).toFixed(2)}× (target ≤ 0.6×)`,
  );
  const reopened = new SqliteSearchIndex(indexPath, storedLines(libraryStores));
  // The baseline, same run: the bounds before (the 10,000 newest matches ranked, every completion
  // of a prefix, as FTS5 merges them).
  const unbounded = new SqliteSearchIndex(indexPath, storedLines(libraryStores), {
    rankedEntries: 10_000,
    prefixWords: Number.POSITIVE_INFINITY,
  });

  // Queries: words, two words, prefixes, phrases, filters.
  const kinds = ["word", "two words", "prefix", "phrase", "filters"] as const;
  const queries = Array.from({ length: 300 }, (_, i) => {
    switch (kinds[i % 5]) {
      case "word":
        return word();
      case "two words":
        return `${word()} ${word()}`;
      case "prefix":
        return `${word().slice(0, 4)}*`;
      case "phrase":
        return `"${word()} ${word()}"`;
      default:
        return `${word()} role:user model:gpt`;
    }
  });
  const variants = { bounded: reopened, unbounded };
  for (const q of queries.slice(0, 20)) {
    for (const index of Object.values(variants)) await index.search(USER, parseQuery(q), { limit: 20 }); // warm
  }
  // Wall time, and CPU time (this process's: steadier when other work shares the machine).
  const times = { bounded: [] as number[], unbounded: [] as number[] };
  const cpuTimes = { bounded: [] as number[], unbounded: [] as number[] };
  const byKind = { bounded: new Map<string, number[]>(), unbounded: new Map<string, number[]>() };
  for (const [i, q] of queries.entries()) {
    // Alternately first: neither variant always finds the other's pages in the cache.
    const order = i % 2 ? (["bounded", "unbounded"] as const) : (["unbounded", "bounded"] as const);
    for (const name of order) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await variants[name].search(USER, parseQuery(q), { limit: 20 });
      const took = performance.now() - t0;
      const { user, system } = process.cpuUsage(cpu0);
      times[name].push(took);
      cpuTimes[name].push((user + system) / 1000);
      const kind = kinds[i % 5];
      byKind[name].set(kind, [...(byKind[name].get(kind) ?? []), (user + system) / 1000]);
    }
  }
  const sorted = (sample: number[]) => sample.toSorted((a, b) => a - b);
  const summary = (sample: number[]) => {
    const s = sorted(sample);
    return `p50 ${ms(quantile(s, 0.5))}, p95 ${ms(quantile(s, 0.95))}, p99 ${ms(quantile(s, 0.99))}, max ${ms(s[s.length - 1])}`;
  };
  const ratios = (after: number[], before: number[]) =>
    [0.5, 0.95, 0.99]
      .map((q) => `p${q * 100} ${(quantile(sorted(after), q) / quantile(sorted(before), q)).toFixed(2)}`)
      .join(", ");
  console.log(
    `search (warm, ${queries.length} queries, each variant in turn): ${summary(times.bounded)} (targets p95 ≤ 300 ms, p99 ≤ 1 s); before (10,000 ranked, prefixes unbounded): ${summary(times.unbounded)}; ratio ${ratios(times.bounded, times.unbounded)}`,
  );
  console.log(
    `  CPU time per query: ${summary(cpuTimes.bounded)}; before: ${summary(cpuTimes.unbounded)}; ratio ${ratios(cpuTimes.bounded, cpuTimes.unbounded)}`,
  );
  for (const kind of kinds) {
    // CPU time per kind of query: where the work goes.
    console.log(
      `  ${kind} (CPU): ${summary(byKind.bounded.get(kind) ?? [])}; before: ${summary(byKind.unbounded.get(kind) ?? [])}`,
    );
  }
  unbounded.close();

  // Recall: a phrase of 4 words from a random entry's text finds its session.
  let found = 0;
  let sampled = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const s = lib.sessions[Math.floor(random() * lib.sessions.length)];
    const docs = batchOf(read(s), { userId: USER, sessionId: s.id, generation: 1, from: 0 }).documents.filter(
      (d) => d.kind !== "tool_call",
    );
    const words = docs[Math.floor(random() * docs.length)].text.split(" ");
    const at = Math.floor(random() * Math.max(1, words.length - 4));
    const phrase = `"${words.slice(at, at + 4).join(" ")}"`;
    sampled++;
    let cursor: string | undefined;
    do {
      const page = await reopened.search(USER, parseQuery(phrase), { limit: 100, cursor });
      if (page.sessions.some((hit) => hit.sessionId === s.id)) {
        found++;
        break;
      }
      cursor = page.cursor;
    } while (cursor);
  }
  const absent = await reopened.search(USER, parseQuery('"zzqx absent phrase nowhere"'), { limit: 20 });
  console.log(
    `recall: ${found}/${sampled} sampled phrases found their session (${((100 * found) / sampled).toFixed(1)} %, target 100 %); absent phrase: ${absent.sessions.length} hits (target 0)`,
  );
  reopened.close();
} finally {
  libraryStores.close();
  rmSync(root, { recursive: true, force: true });
}

/**
 * Ingest throughput: appends of ~10 lines, without indexing (baseline) and with indexing as the
 * server does it (each append marks its session dirty; a background drain indexes them in
 * batches), on the library's first INGEST_MB.
 */
async function measureIngest() {
  const sample: Array<{ id: string; bytes: Uint8Array }> = [];
  for (let n = 0, i = 0; i < lib.sessions.length && n < INGEST_MB * 1e6; i++) {
    const bytes = read(lib.sessions[i]);
    sample.push({ id: lib.sessions[i].id, bytes });
    n += bytes.length;
  }
  const sampleBytes = sample.reduce((n, s) => n + s.bytes.length, 0);
  async function ingest(dir: string, index?: SearchIndex, sessions = sample) {
    const stores = embeddedStores(dir);
    const appender = new Appender(stores);
    const indexer = index && new SearchIndexer(stores, index);
    const t0 = performance.now();
    for (const { id, bytes } of sessions) {
      let offset = 0;
      while (offset < bytes.length) {
        let end = offset;
        for (let lines = 0; lines < 10 && end < bytes.length; lines++) end = bytes.indexOf(10, end) + 1;
        await appender.append({ userId: USER, sessionId: id, offset, body: bytes.subarray(offset, end) });
        indexer?.markDirty(USER, id); // as the server does: the background drain indexes it
        offset = end;
      }
    }
    // Counted in: the ingest is done when everything appended is searchable.
    const drainStarted = performance.now();
    await indexer?.flush();
    const now = performance.now();
    stores.close();
    return { seconds: (now - t0) / 1000, lagMs: now - drainStarted };
  }
  const noLines = () => Promise.resolve([]);
  // Without indexing (the baseline); before: the drain on the appends' thread; after: on the
  // index's writer thread (as `npm start` runs). After a warm-up, run there and back twice
  // (ABC CBA ABC CBA) and summed: a machine that gets busier or quieter weighs on each the same.
  const variants = {
    plain: (dir: string) => ingest(dir),
    sameThread: async (dir: string) => {
      const index = new SqliteSearchIndex(`${dir}.sqlite`, noLines);
      const run = await ingest(dir, index);
      index.close();
      return run;
    },
    threaded: async (dir: string) => {
      const index = new ThreadedSearchIndex(`${dir}.sqlite`, noLines);
      const run = await ingest(dir, index);
      await index.close();
      return run;
    },
  };
  type Variant = keyof typeof variants;
  const runs: Record<Variant, { seconds: number; lagMs: number }> = {
    plain: { seconds: 0, lagMs: 0 },
    sameThread: { seconds: 0, lagMs: 0 },
    threaded: { seconds: 0, lagMs: 0 },
  };
  await ingest(join(root, "warm-up"), undefined, sample.slice(0, 10));
  const order: Variant[] = ["plain", "threaded", "sameThread"];
  const rounds = [...order, ...order.toReversed(), ...order, ...order.toReversed()];
  for (const [n, name] of rounds.entries()) {
    const run = await variants[name](join(root, `ingest-${n}`));
    runs[name].seconds += run.seconds / 4;
    runs[name].lagMs = Math.max(runs[name].lagMs, run.lagMs);
    for (const suffix of ["", ".sqlite", ".sqlite-wal", ".sqlite-shm"]) {
      rmSync(join(root, `ingest-${n}${suffix}`), { recursive: true, force: true });
    }
  }
  const { plain, threaded, sameThread } = runs;
  const withIndexing = (name: string, run: typeof plain) =>
    `${name}: ${mbps(sampleBytes, run.seconds).toFixed(2)} MB/s, ratio ${(plain.seconds / run.seconds).toFixed(2)} until all searchable (target ≥ 0.70), ${(plain.seconds / (run.seconds - run.lagMs / 1000)).toFixed(2)} for the appends alone, the last append searchable at most ${Math.round(run.lagMs)} ms after it was stored`;
  console.log(
    `ingest of ${sample.length} sessions (${mb(sampleBytes)}) in appends of 10 lines, each way 4 times: without indexing ${mbps(sampleBytes, plain.seconds).toFixed(2)} MB/s\n  ${withIndexing("indexing on a writer thread", threaded)}\n  ${withIndexing("indexing on the appends' thread (before)", sameThread)}`,
  );
  sample.length = 0;
}

/** Initial indexing of the whole library into `indexPath`, as `npm run reindex` does it: timed. */
async function buildIndex(indexPath: string) {
  // Initial indexing of the whole library from the stored bytes, as `npm run reindex` does it.
  const index = new ThreadedSearchIndex(indexPath, storedLines(libraryStores));
  // The text indexed, counted from the batches the rebuild makes (it reads them on this thread).
  let textBytes = 0;
  const counting: SearchIndex = {
    state: (userId, sessionId) => index.state(userId, sessionId),
    sessions: (userId) => index.sessions(userId),
    users: () => index.users(),
    apply: (batch) => counting.applyAll([batch]).then(([applied]) => applied),
    applyAll: async (batches) => {
      const applied = await index.applyAll(batches);
      batches.forEach((batch, i) => {
        if (applied[i]) for (const doc of batch.documents) textBytes += Buffer.byteLength(doc.text);
      });
      return applied;
    },
    remove: (userId, sessionId) => index.remove(userId, sessionId),
    clear: (userId) => index.clear(userId),
    files: (userId, sessionId, limit) => index.files(userId, sessionId, limit),
    search: (userId, query, options) => index.search(userId, query, options),
  };
  started = performance.now();
  const cpu = process.cpuUsage(); // every thread of the process: the load of other work does not count
  await new SearchIndexer(libraryStores, counting).rebuild([USER]);
  await index.optimize();
  const indexSeconds = (performance.now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  const cpuSeconds = (user + system) / 1e6;
  console.log(
    `initial indexing: ${mb(totalBytes)} in ${indexSeconds.toFixed(1)} s: ${mbps(totalBytes, indexSeconds).toFixed(2)} MB/s (2 GB in ${(2000 / mbps(totalBytes, indexSeconds) / 60).toFixed(1)} min at this rate; target ≤ 10 min); ${cpuSeconds.toFixed(1)} CPU-seconds, ${mbps(totalBytes, cpuSeconds).toFixed(2)} MB per CPU-second`,
  );
  await index.close();

  const indexBytes = statSync(indexPath).size; // closing checkpointed the WAL into the file
  return { indexPath, textBytes, indexBytes };
}

/**
 * The library's index kept in the cache folder beside it, named by the index's layout version:
 * built (and timed) on the first `--reuse-index` run, opened as it is afterwards.
 */
async function keptIndex() {
  const indexPath = join(lib.dir, `search-${INDEX_LAYOUT}.sqlite`);
  const facts = `${indexPath}.json`;
  if (existsSync(facts)) {
    console.log(`index: kept from an earlier run (${indexPath})`);
    return { indexPath, ...(JSON.parse(readFileSync(facts, "utf8")) as { textBytes: number; indexBytes: number }) };
  }
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${indexPath}${suffix}`, { force: true });
  const built = await buildIndex(indexPath);
  writeFileSync(facts, JSON.stringify({ textBytes: built.textBytes, indexBytes: built.indexBytes }));
  return built;
}
