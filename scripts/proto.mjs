import { readFileSync } from "node:fs";
const bytes = readFileSync(process.argv[2]);
const dec = new TextDecoder();
const spans = []; let s = 0; for (;;) { const e = bytes.indexOf(10, s); if (e < 0) break; spans.push([s, e]); s = e + 1; }
const BODY = /(?:[^"\\\u0000-\u001f]+|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*/y;
function skeleton(text) {
  let out = ""; let from = 0; let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      BODY.lastIndex = i + 1;
      BODY.exec(text);
      const end = BODY.lastIndex;
      if (text.charCodeAt(end) !== 34) return undefined;
      if (depth >= 2 && end - i > 64) {
        let k = end + 1; while (k < n && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9)) k++;
        if (text.charCodeAt(k) !== 58) { out += text.slice(from, i + 1); from = end; }
      }
      i = end;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) depth--;
  }
  return from === 0 ? text : out + text.slice(from);
}
const mode = process.argv[3];
const t = performance.now(); let a = 0;
if (mode === "parse") for (const [x, y] of spans) { const v = JSON.parse(dec.decode(bytes.subarray(x, y))); a += v.type.length; }
else if (mode === "skel") for (const [x, y] of spans) { const v = JSON.parse(skeleton(dec.decode(bytes.subarray(x, y)))); a += v.type.length; }
else for (const [x, y] of spans) { a += dec.decode(bytes.subarray(x, y)).length; }
console.log(mode, (performance.now() - t).toFixed(1));
