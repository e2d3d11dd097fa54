// A/B: index time of two builds of @pisync/format, fresh processes, alternating.
import { execFileSync } from "node:child_process";
const [file, a, b, runs = "9"] = process.argv.slice(2);
const child = `
import { readFileSync } from "node:fs";
const { parseSession, buildSessionContext } = await import(process.argv[1]);
const bytes = readFileSync(process.argv[2]);
const t = performance.now();
buildSessionContext(parseSession(bytes));
console.log(performance.now() - t);`;
const times = { a: [], b: [] };
for (let i = 0; i < Number(runs); i++) for (const [k, dist] of [["a", a], ["b", b]]) {
  times[k].push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", child, dist + "/index.js", file], { encoding: "utf8" })));
}
const med = (x) => x.sort((p, q) => p - q)[x.length >> 1];
console.log(`A ${med(times.a).toFixed(1)} ms   B ${med(times.b).toFixed(1)} ms`);
