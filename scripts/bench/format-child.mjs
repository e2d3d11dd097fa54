// One measured run in a fresh process, on the compiled library (as users run it): `pi`
// (SessionManager.open + buildSessionContext of pi 0.73.1), `pi1` (the same with pi 1.x: run it
// under Node 22) or `pisync` (read + parseSession + buildSessionContext), on the same file.
// Prints JSON.
import { readFileSync } from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { buildSessionContext, parseSession } from "@pisync/format";

const [which, file] = process.argv.slice(2);
// Loaded before measuring, as the libraries above are.
const pi1 = which === "pi1" ? (await import("@earendil-works/pi-coding-agent")).SessionManager : undefined;
globalThis.gc?.();
const rssBefore = process.memoryUsage().rss;
const start = performance.now();
let messages;
if (which === "pi" || which === "pi1") {
  const sm = (pi1 ?? SessionManager).open(file);
  messages = sm.buildSessionContext().messages.length;
} else {
  const session = parseSession(readFileSync(file));
  messages = buildSessionContext(session).messages.length;
}
const ms = performance.now() - start;
const peak = process.resourceUsage().maxRSS * 1024;
console.log(JSON.stringify({ which, ms, extraBytes: peak - rssBefore, messages }));
