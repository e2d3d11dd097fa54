import { readFileSync } from "node:fs";
const t0 = performance.now();
const bytes = readFileSync(process.argv[2]);
const mode = process.argv[3];
const t1 = performance.now();
const dec = new TextDecoder("utf-8", { ignoreBOM: true });
const starts = new Int32Array(100000), ends = new Int32Array(100000); let n = 0;
{ let s = 0; for (;;) { const e = bytes.indexOf(10, s); if (e < 0) break; starts[n] = s; ends[n] = e; n++; s = e + 1; } }
let a = 0;
if (mode === "line") {
  for (let k = n - 1; k >= 0; k--) { const v = JSON.parse(dec.decode(bytes.subarray(starts[k], ends[k]))); a += v.type.length; }
} else if (mode === "whole") {
  const text = dec.decode(bytes);
  if (text.length !== bytes.length) throw new Error("non-ascii");
  for (let k = n - 1; k >= 0; k--) { const v = JSON.parse(text.slice(starts[k], ends[k])); a += v.type.length; }
} else {
  const CH = Number(mode);
  let k = n - 1;
  while (k >= 0) {
    let lo = k; while (lo > 0 && ends[k] - starts[lo - 1] < CH) lo--;
    const base = starts[lo];
    const text = dec.decode(bytes.subarray(base, ends[k]));
    if (text.length !== ends[k] - base) throw new Error("non-ascii");
    for (let j = k; j >= lo; j--) { const v = JSON.parse(text.slice(starts[j] - base, ends[j] - base)); a += v.type.length; }
    k = lo - 1;
  }
}
const t2 = performance.now();
console.log(mode, "read", (t1 - t0).toFixed(1), "parse", (t2 - t1).toFixed(1));
