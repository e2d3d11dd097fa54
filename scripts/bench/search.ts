/**
 * Search benchmark (issue: your library), embedded adapter:
 * - a generated library: SESSIONS sessions written by pi's own SessionManager (user turns,
 *   assistant turns with thinking and tool calls, tool results), words from a 20,000-word
 *   pseudo-vocabulary so that phrases are rare, as in real text;
 * - ingest throughput through the append protocol without indexing (the baseline, same run)
 *   and with the server's background indexing (dirty sessions drained in batches): ratio
 *   (target ≥ 0.70);
 * - initial indexing throughput of the whole library from the stored bytes (rebuild);
 * - index size against the text it indexes (target ≤ 0.6×);
 * - warm search latency p50/p95/p99 over mixed queries (targets p95 ≤ 300 ms, p99 ≤ 1 s);
 * - recall: exact phrases sampled from random entries find their session (target 100 %); an
 *   absent phrase finds nothing.
 *
 * Usage: npm run bench:search [-- SESSIONS=1000 [SAMPLES=1000]]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { Appender, SearchIndexer, storedLines } from "@pisync/core";
import { parseSession } from "@pisync/format";
import { batchOf, parseQuery } from "@pisync/search";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { embeddedStores } from "@pisync/store/embedded";
import { seeded } from "./generate-session.js";

const SESSIONS = Number(process.argv[2] ?? 1000);
const SAMPLES = Number(process.argv[3] ?? 1000);
const USER = "bench";

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

function writeLibrary(dir: string): string[] {
  for (let i = 0; i < SESSIONS; i++) {
    const sm = SessionManager.create(`/home/dev/project-${i % 40}`, dir);
    let clock = Date.parse("2026-01-01T00:00:00Z") + i * 60_000;
    const turns = 3 + Math.floor(random() * 8);
    for (let t = 0; t < turns; t++) {
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
    }
  }
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile() && f.name.endsWith(".jsonl"))
    .map((f) => join(f.parentPath, f.name))
    .sort();
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (n: number) => `${n.toFixed(1)} ms`;

const root = mkdtempSync(join(tmpdir(), "pisync-bench-search-"));
try {
  let started = performance.now();
  const files = writeLibrary(join(root, "pi"));
  const library = files.map((path) => {
    const bytes = new Uint8Array(readFileSync(path));
    return { id: parseSession(bytes.subarray(0, bytes.indexOf(10) + 1)).header?.id as string, bytes };
  });
  const totalBytes = library.reduce((n, s) => n + s.bytes.length, 0);
  console.log(
    `library: ${library.length} sessions, ${(totalBytes / 1e6).toFixed(1)} MB (written by pi's SessionManager in ${Math.round(performance.now() - started)} ms)`,
  );

  // Ingest: appends of ~10 lines, without indexing (baseline) and with indexing as the server
  // does it (each append marks its session dirty; a background drain indexes them in batches).
  async function ingest(dir: string, index?: SqliteSearchIndex) {
    const stores = embeddedStores(dir);
    const appender = new Appender(stores);
    const indexer = index && new SearchIndexer(stores, index);
    const t0 = performance.now();
    for (const { id, bytes } of library) {
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
    return { seconds: (now - t0) / 1000, lagMs: now - drainStarted, stores };
  }
  const plain = await ingest(join(root, "plain"));
  const followIndex = new SqliteSearchIndex(join(root, "follow.sqlite"), () => Promise.resolve([]));
  const followed = await ingest(join(root, "followed"), followIndex);
  followIndex.close();
  followed.stores.close();
  const mbps = (s: number) => totalBytes / 1e6 / s;
  console.log(
    `ingest: without indexing ${mbps(plain.seconds).toFixed(2)} MB/s, with indexing ${mbps(followed.seconds).toFixed(2)} MB/s: ratio ${(plain.seconds / followed.seconds).toFixed(2)} until all searchable (target ≥ 0.70), ${(plain.seconds / (followed.seconds - followed.lagMs / 1000)).toFixed(2)} for the appends alone; the last append searchable ${Math.round(followed.lagMs)} ms after it was stored`,
  );

  // Initial indexing of the whole library from the stored bytes.
  const indexPath = join(root, "search.sqlite");
  const index = new SqliteSearchIndex(indexPath, storedLines(plain.stores));
  started = performance.now();
  await new SearchIndexer(plain.stores, index).rebuild([USER]);
  index.optimize();
  const indexSeconds = (performance.now() - started) / 1000;
  console.log(
    `initial indexing: ${(totalBytes / 1e6).toFixed(1)} MB in ${indexSeconds.toFixed(1)} s: ${mbps(indexSeconds).toFixed(2)} MB/s (2 GB in ${(2000 / mbps(indexSeconds) / 60).toFixed(1)} min at this rate; target ≤ 10 min)`,
  );

  let textBytes = 0;
  for (const { id, bytes } of library) {
    for (const doc of batchOf(bytes, { userId: USER, sessionId: id, generation: 1, from: 0 }).documents)
      textBytes += Buffer.byteLength(doc.text);
  }
  index.close();
  const reopened = new SqliteSearchIndex(indexPath, storedLines(plain.stores)); // closing checkpointed the WAL into the file
  const indexBytes = statSync(indexPath).size;
  console.log(
    `index size: ${(indexBytes / 1e6).toFixed(1)} MB for ${(textBytes / 1e6).toFixed(1)} MB of text: ${(indexBytes / textBytes).toFixed(2)}× (target ≤ 0.6×)`,
  );

  // Queries: words, two words, prefixes, phrases, filters.
  const queries = Array.from({ length: 300 }, (_, i) => {
    switch (i % 5) {
      case 0:
        return word();
      case 1:
        return `${word()} ${word()}`;
      case 2:
        return `${word().slice(0, 4)}*`;
      case 3:
        return `"${word()} ${word()}"`;
      default:
        return `${word()} role:user model:gpt`;
    }
  });
  for (const q of queries.slice(0, 20)) await reopened.search(USER, parseQuery(q), { limit: 20 }); // warm
  const times: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    await reopened.search(USER, parseQuery(q), { limit: 20 });
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(
    `search (warm, ${times.length} queries): p50 ${ms(quantile(times, 0.5))}, p95 ${ms(quantile(times, 0.95))} (target ≤ 300 ms), p99 ${ms(quantile(times, 0.99))} (target ≤ 1 s)`,
  );

  // Recall: a phrase of 4 words from a random entry's text finds its session.
  let found = 0;
  let sampled = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const { id, bytes } = library[Math.floor(random() * library.length)];
    const docs = batchOf(bytes, { userId: USER, sessionId: id, generation: 1, from: 0 }).documents.filter(
      (d) => d.kind !== "tool_call",
    );
    const words = docs[Math.floor(random() * docs.length)].text.split(" ");
    const at = Math.floor(random() * Math.max(1, words.length - 4));
    const phrase = `"${words.slice(at, at + 4).join(" ")}"`;
    sampled++;
    let cursor: string | undefined;
    do {
      const page = await reopened.search(USER, parseQuery(phrase), { limit: 100, cursor });
      if (page.sessions.some((s) => s.sessionId === id)) {
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
  plain.stores.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
