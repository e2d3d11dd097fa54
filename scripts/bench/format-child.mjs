// One measured run in a fresh process, on the compiled library (as users run it): `pi`
// (SessionManager.open + buildSessionContext of pi 0.73.1), `pi1` (the same with pi 1.x: run it
// under Node 22), `pisync` (readSessionFile + buildSessionContext: a file opened from its path,
// as pi opens it) or `pisync-bytes` (readFileSync + parseSession + buildSessionContext), on the
// same file.
// Prints JSON, with a digest of the context built (taken after timing) so that the bench can
// check that both sides did the same work.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { buildSessionContext, parseSession } from "@pisync/format";
import { readSessionFile } from "@pisync/format/file";

const [which, file] = process.argv.slice(2);
// Loaded before measuring, as the libraries above are.
const pi1 = which === "pi1" ? (await import("@earendil-works/pi-coding-agent")).SessionManager : undefined;
globalThis.gc?.();
const rssBefore = process.memoryUsage().rss;
const start = performance.now();
let context;
if (which === "pi" || which === "pi1") {
  const sm = (pi1 ?? SessionManager).open(file);
  context = sm.buildSessionContext();
} else {
  const session = which === "pisync-bytes" ? parseSession(readFileSync(file)) : readSessionFile(file);
  context = buildSessionContext(session);
}
const ms = performance.now() - start;
const peak = process.resourceUsage().maxRSS * 1024;
const digest = createHash("sha256").update(JSON.stringify(context)).digest("hex");
console.log(JSON.stringify({ which, ms, extraBytes: peak - rssBefore, messages: context.messages.length, digest }));
