/**
 * Format benchmark (issue: foundation). A 40 MB, 20,000-entry session written by pi's library;
 * `parseSession` + `buildSessionContext` (default leaf) against pi's `SessionManager.open` +
 * `buildSessionContext`, each in fresh processes, alternating, same run. Prints medians and
 * ratios. Targets: time ≤ 0.3× pi's; extra memory ≤ 2× the file's size.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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
}

function once(which: "pi" | "pisync", path = file): Run {
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", join(import.meta.dirname, "format-child.mjs"), which, path],
    {
      encoding: "utf8",
    },
  );
  return JSON.parse(out.trim().split("\n").pop() as string) as Run;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results: Record<string, Run[]> = { pi: [], pisync: [] };
for (let i = 0; i < runs; i++) for (const which of ["pi", "pisync"] as const) results[which].push(once(which));

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const pi = { ms: median(results.pi.map((r) => r.ms)), mem: median(results.pi.map((r) => r.extraBytes)) };
const ours = { ms: median(results.pisync.map((r) => r.ms)), mem: median(results.pisync.map((r) => r.extraBytes)) };
if (results.pi[0].messages !== results.pisync[0].messages) {
  throw new Error(`context sizes differ: pi ${results.pi[0].messages}, pisync ${results.pisync[0].messages}`);
}
console.log(`file: ${mb(size)}, context: ${results.pi[0].messages} messages, ${runs} runs each (medians)`);
console.log(
  `pi      open + buildSessionContext: ${pi.ms.toFixed(0)} ms, extra memory ${mb(pi.mem)} (${(pi.mem / size).toFixed(2)}× file)`,
);
console.log(
  `pisync  parseSession + context:     ${ours.ms.toFixed(0)} ms, extra memory ${mb(ours.mem)} (${(ours.mem / size).toFixed(2)}× file)`,
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
const variantPi = median(variant.pi.map((r) => r.ms));
const variantOurs = median(variant.pisync.map((r) => r.ms));
console.log(
  `with escapes and non-ASCII text (${mb(statSync(escaped).size)}): pi ${variantPi.toFixed(0)} ms, pisync ${variantOurs.toFixed(0)} ms, ratio ${(variantOurs / variantPi).toFixed(3)}`,
);
