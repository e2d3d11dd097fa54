/**
 * Masking benchmark (issue: share links that hold): recall on a generated corpus of every
 * credential shape in every placement of a session (target: 100 %), false positives on the
 * ordinary text of the test fixtures (each printed), throughput in MB/s against `JSON.parse`
 * of the same bytes in the same run, and the masker's cold import cost as the Lambda bundle
 * ships it (bundled with the stack's esbuild options) against an empty module.
 *
 * Usage: npm run bench:mask [-- more fixture folders…]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentialShapes, hostileSession, leaks, pathologicalTexts } from "@pisync/testing/hostile";
import { build } from "esbuild";
import { lambdaBuildOptions } from "../../infra/lib/bundling.js";
import { maskJsonLine } from "../../packages/viewer/src/mask.js";

const root = new URL("../../", import.meta.url).pathname;

// Recall: every credential of the hostile session masked where it was placed.
const shapes = credentialShapes();
const session = hostileSession("bench", shapes);
const masked = session.lines.map((line) => maskJsonLine(line).text);
const byId = new Map<string | undefined, string>();
session.lines.forEach((line, i) => {
  const entry = JSON.parse(line) as { type: string; id?: string };
  byId.set(entry.type === "session" ? undefined : entry.id, masked[i]);
});
const missed = session.placed.filter((p) => leaks(byId.get(p.id) ?? "", p.shape.secret).length > 0);
console.log(
  `recall: ${session.placed.length - missed.length}/${session.placed.length} placed credentials masked ` +
    `(${((100 * (session.placed.length - missed.length)) / session.placed.length).toFixed(1)} %; ` +
    `${shapes.length} shapes × ${new Set(session.placed.map((p) => p.placement)).size} placements)`,
);
for (const m of missed) console.log(`  missed: ${m.shape.rule} in ${m.placement}`);

// False positives: what is masked in the fixtures' ordinary text.
function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...jsonlFiles(path));
    else if (name.endsWith(".jsonl")) out.push(path);
  }
  return out;
}
const folders = [join(root, "packages/testing/fixtures"), ...process.argv.slice(2)];
const files = folders.flatMap(jsonlFiles);
const fixtureLines = files.flatMap((f) => readFileSync(f, "utf8").split("\n").filter(Boolean));
const positives = new Map<string, number>();
let falsePositives = 0;
for (const line of fixtureLines) {
  const { text, count } = maskJsonLine(line);
  if (count === 0) continue;
  falsePositives += count;
  // What was masked: the text around each mask.
  for (const m of text.matchAll(/.{0,40}\[masked: [a-z0-9-]+\].{0,10}/g)) {
    positives.set(m[0], (positives.get(m[0]) ?? 0) + 1);
  }
}
console.log(
  `false positives: ${falsePositives} in ${fixtureLines.length} fixture lines (${files.length} files, ` +
    `${(fixtureLines.reduce((n, l) => n + l.length, 0) / 1e6).toFixed(2)} MB)`,
);
for (const [context, n] of positives) console.log(`  ${n}× …${context}…`);

// Throughput: masking against JSON.parse of the same lines.
function throughput(lines: string[]) {
  const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
  const rate = (run: () => void) => {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      run();
      best = Math.min(best, performance.now() - t);
    }
    return bytes / 1e6 / (best / 1000);
  };
  const parse = rate(() => {
    for (const line of lines) {
      try {
        JSON.parse(line);
      } catch {}
    }
  });
  const mask = rate(() => {
    for (const line of lines) maskJsonLine(line);
  });
  return { mb: bytes / 1e6, parse, mask };
}
for (const [name, lines] of [
  ["fixtures (ordinary sessions)", fixtureLines],
  ["hostile corpus", session.lines],
] as const) {
  const t = throughput(lines);
  console.log(
    `throughput on ${name}, ${t.mb.toFixed(2)} MB: mask ${t.mask.toFixed(1)} MB/s, JSON.parse ${t.parse.toFixed(0)} MB/s ` +
      `(mask / parse ${(t.mask / t.parse).toFixed(3)}×)`,
  );
}

// Hostile inputs: texts built to make rules start and fail as often as they can, 1 MB each.
for (const [name, text] of Object.entries(pathologicalTexts(1 << 20))) {
  const line = JSON.stringify({ type: "message", id: "h", parentId: null, message: { role: "user", content: text } });
  const t = throughput([line]);
  console.log(`  hostile input "${name}": mask ${t.mask.toFixed(1)} MB/s (JSON.parse ${t.parse.toFixed(0)} MB/s)`);
}

// Import cost: the masker bundled as the stack bundles the function, cold-imported in a fresh node.
const out = mkdtempSync(join(tmpdir(), "pisync-mask-bench-"));
async function coldImport(name: string, entry: string) {
  const outfile = join(out, `${name}.bundle.mjs`);
  await build(lambdaBuildOptions(entry, outfile));
  // CPU time of the import (user + system): steadier than wall time on a busy machine.
  const runs: { wall: number; cpu: number }[] = [];
  for (let i = 0; i < 9; i++) {
    const out = execFileSync(
      process.execPath,
      [
        "-e",
        `const t=performance.now(),c=process.cpuUsage();import(${JSON.stringify(outfile)}).then(()=>{const d=process.cpuUsage(c);console.log(performance.now()-t,(d.user+d.system)/1000)})`,
      ],
      { encoding: "utf8" },
    );
    const [wall, cpu] = out.trim().split(" ").map(Number);
    runs.push({ wall, cpu });
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { bytes: statSync(outfile).size, ms: median(runs.map((r) => r.wall)), cpu: median(runs.map((r) => r.cpu)) };
}
const emptyEntry = join(out, "empty.mjs");
writeFileSync(emptyEntry, "export const empty = 1;\n");
const empty = await coldImport("empty", emptyEntry);
const masker = await coldImport("mask", join(root, "packages/viewer/src/mask.ts"));
rmSync(out, { recursive: true, force: true });
console.log(
  `import cost of the masker (bundled as the function is, minified): ${(masker.bytes / 1024).toFixed(0)} KB, ` +
    `cold import ${masker.cpu.toFixed(1)} ms CPU (${masker.ms.toFixed(1)} ms wall) against an empty module's ` +
    `${empty.cpu.toFixed(1)} ms CPU (${empty.ms.toFixed(1)} ms wall): the masker adds ${(masker.cpu - empty.cpu).toFixed(1)} ms CPU`,
);
