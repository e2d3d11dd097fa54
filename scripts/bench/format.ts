/**
 * Format benchmark (issue: foundation). A 40 MB, 20,000-entry session written by pi's library;
 * `parseSession` + `buildSessionContext` (default leaf) against pi's `SessionManager.open` +
 * `buildSessionContext`, each in fresh processes, alternating, same run. Prints medians and
 * ratios. Targets: time ≤ 0.3× pi's; extra memory ≤ 2× the file's size.
 *
 * Then the same on a pi 1.x session of the same size (written by pi 1.6.0: system prompts and
 * their patches, compaction checkpoints, usage entries, context edits), against pi 0.73.1 under
 * Node 20 and against pi 1.6.0 under Node 22 (pisync measured under both).
 *
 * Each side does the same work, timed the same way: open the file from its path, index it, build
 * the default leaf's context (pi: `SessionManager.open` + `buildSessionContext`; pisync:
 * `readSessionFile` + `buildSessionContext`). pisync reading the same file from bytes already in
 * memory (`readFileSync` + `parseSession`) is printed beside it. The bench fails unless the
 * contexts are the same (a digest of each run's context, taken after timing).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { node22 } from "../node22.js";
import { cachedSession } from "./generate-session.js";

const runs = Number(process.env.BENCH_RUNS ?? 5);
// The child imports the compiled library, as its users do.
execFileSync("npm", ["run", "build", "-w", "@pisync/format"], { stdio: "ignore" });
const dir = join(process.cwd(), ".bench");
mkdirSync(dir, { recursive: true });
const file = cachedSession(dir);
const size = statSync(file).size;

interface Run {
  which: string;
  ms: number;
  extraBytes: number;
  messages: number;
  /** SHA-256 of the built context's JSON: both sides must have done the same work. */
  digest: string;
}

/** Fails the bench unless every run of `a` and `b` built the same context. */
function sameContext(what: string, a: Run[], b: Run[]): void {
  const digests = new Set([...a, ...b].map((r) => r.digest));
  if (digests.size !== 1) throw new Error(`${what}: the contexts differ (${[...digests].join(", ")})`);
}

function once(which: "pi" | "pi1" | "pisync" | "pisync-bytes", path = file, node = process.execPath): Run {
  const out = execFileSync(node, ["--expose-gc", join(import.meta.dirname, "format-child.mjs"), which, path], {
    encoding: "utf8",
  });
  return JSON.parse(out.trim().split("\n").pop() as string) as Run;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results: Record<string, Run[]> = { pi: [], pisync: [] };
for (let i = 0; i < runs; i++) for (const which of ["pi", "pisync"] as const) results[which].push(once(which));

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const pi = { ms: median(results.pi.map((r) => r.ms)), mem: median(results.pi.map((r) => r.extraBytes)) };
const ours = { ms: median(results.pisync.map((r) => r.ms)), mem: median(results.pisync.map((r) => r.extraBytes)) };
sameContext("pi 0.73.1's session", results.pi, results.pisync);
console.log(`file: ${mb(size)}, context: ${results.pi[0].messages} messages, ${runs} runs each (medians)`);
console.log(
  `pi      open + buildSessionContext: ${pi.ms.toFixed(0)} ms, extra memory ${mb(pi.mem)} (${(pi.mem / size).toFixed(2)}× file)`,
);
console.log(
  `pisync  readSessionFile + context: ${ours.ms.toFixed(0)} ms, extra memory ${mb(ours.mem)} (${(ours.mem / size).toFixed(2)}× file)`,
);
console.log(`ratio time pisync/pi: ${(ours.ms / pi.ms).toFixed(3)}  (target ≤ 0.3)`);
console.log(`ratio extra memory / file size: ${(ours.mem / size).toFixed(2)}  (target ≤ 2)`);

// The same session with the text real sessions carry: escapes (newlines, quotes) and non-ASCII
// letters, put into its prose (still valid JSON, same tree). Informational: pi's library wrote
// the file above, not this one.
const escaped = join(dir, "bench-escaped.jsonl");
if (!existsSync(escaped)) {
  const text = readFileSync(file, "latin1")
    .replaceAll(" the ", " the\\n")
    .replaceAll(" tree ", ' \\"tree\\" ')
    .replaceAll(" cloud ", " cl\u00c3\u00b6ud ");
  writeFileSync(escaped, text, "latin1");
}
const variant = { pi: [] as Run[], pisync: [] as Run[] };
for (let i = 0; i < runs; i++) for (const which of ["pi", "pisync"] as const) variant[which].push(once(which, escaped));
sameContext("the session with escapes", variant.pi, variant.pisync);
const variantPi = median(variant.pi.map((r) => r.ms));
const variantOurs = median(variant.pisync.map((r) => r.ms));
console.log(
  `with escapes and non-ASCII text (${mb(statSync(escaped).size)}): pi ${variantPi.toFixed(0)} ms, pisync ${variantOurs.toFixed(0)} ms, ratio ${(variantOurs / variantPi).toFixed(3)}`,
);

// A pi 1.x session: pisync against pi 0.73.1 (Node 20) and against pi 1.6.0 (Node 22), alternating.
const pi1File = cachedSession(dir, 20_000, 40, { pi1: true, node22 });
const pi1Size = statSync(pi1File).size;
const pi1Runs: Record<string, Run[]> = { pi: [], pisync: [], pi1: [], pisync22: [], bytes22: [] };
for (let i = 0; i < runs; i++) {
  pi1Runs.pi.push(once("pi", pi1File));
  pi1Runs.pisync.push(once("pisync", pi1File));
  pi1Runs.pi1.push(once("pi1", pi1File, node22));
  pi1Runs.pisync22.push(once("pisync", pi1File, node22));
  pi1Runs.bytes22.push(once("pisync-bytes", pi1File, node22));
}
// pi 0.73.1 does not know 1.x's rules (its context of this file differs): pi 1.6.0 is the oracle.
sameContext("pi 1.6.0's session", pi1Runs.pi1, [...pi1Runs.pisync, ...pi1Runs.pisync22, ...pi1Runs.bytes22]);
const m = (which: string) => ({
  ms: median(pi1Runs[which].map((r) => r.ms)),
  mem: median(pi1Runs[which].map((r) => r.extraBytes)),
});
const [p0, o20, p1, o22, b22] = [m("pi"), m("pisync"), m("pi1"), m("pisync22"), m("bytes22")];
console.log(
  `\npi 1.x session with system prompts: ${mb(pi1Size)}, context: ${pi1Runs.pi1[0].messages} messages (medians)`,
);
for (const [label, r] of [
  ["pi 0.73.1 (Node 20)", p0],
  ["pisync    (Node 20)", o20],
  ["pi 1.6.0  (Node 22)", p1],
  ["pisync    (Node 22)", o22],
  ["pisync, from bytes in memory (Node 22)", b22],
] as const) {
  console.log(`${label}: ${r.ms.toFixed(0)} ms, extra memory ${mb(r.mem)} (${(r.mem / pi1Size).toFixed(2)}× file)`);
}
console.log(`ratio time pisync/pi 0.73.1 (Node 20): ${(o20.ms / p0.ms).toFixed(3)}  (target ≤ 0.3)`);
console.log(`ratio time pisync/pi 1.6.0 (Node 22): ${(o22.ms / p1.ms).toFixed(3)}  (target ≤ 0.3)`);
console.log(`ratio time pisync from bytes in memory/pi 1.6.0 (Node 22): ${(b22.ms / p1.ms).toFixed(3)}`);
console.log(
  `ratio extra memory / file size: ${(o20.mem / pi1Size).toFixed(2)} (Node 20), ${(o22.mem / pi1Size).toFixed(2)} (Node 22)  (target ≤ 2)`,
);
