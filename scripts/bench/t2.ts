import { readFileSync } from "node:fs";
import { indexSession, buildSessionContext } from "@pisync/format";
const f = process.argv[2];
let t = performance.now();
const b = readFileSync(f); const t1 = performance.now();
const s = indexSession(b); const t2 = performance.now();
const c = buildSessionContext(s); const t3 = performance.now();
console.log(`read ${(t1-t).toFixed(0)} index ${(t2-t1).toFixed(0)} ctx ${(t3-t2).toFixed(0)} msgs ${c.messages.length}`);
