import { readFileSync } from "node:fs";
const { skeletonReader } = await import("../packages/format/dist/skeleton.js");
const bytes = readFileSync(process.argv[2]);
const read = skeletonReader();
let s = 0, total = 0, n = 0; const big = [];
for (let start = 0; ; ) { const e = bytes.indexOf(10, start); if (e < 0) break; const t = read(bytes, start, e - start); total += e - start; s += t.length; n++; if (t.length > 5000) big.push(t.slice(0, 300)); start = e + 1; }
console.log({ total, skeleton: s, n, bigCount: big.length });
console.log(big.slice(0, 3).join("\n\n"));
