/**
 * `npm run push-busy [-- FILES]`: the first backup of a year of sessions against a busy
 * server, at full size (default 4,000 files): `npm start` on a fresh data folder, `pisync push`
 * through a proxy that answers one request in five 429 (some 503 and 507) with `Retry-After`,
 * and every cloud copy compared with its file. Prints the figures; exits 1 unless push exited
 * 0 with every file sent, byte-exact, and never came back before the time it was given. The
 * test (`packages/cli/test/busy-server.test.ts`) runs the same at 400 files.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pushThroughBusyServer } from "@pisync/testing/busy-push";
import { buildCli, startServer } from "@pisync/testing/cli";

const count = Number(process.argv[2] ?? 4000);
buildCli();
const dataDir = mkdtempSync(join(tmpdir(), "pisync-push-busy-"));
const server = await startServer(dataDir);
try {
  const result = await pushThroughBusyServer(server, count);
  const { stderr: _stderr, mismatched, ...figures } = result;
  console.log(JSON.stringify({ files: count, ...figures, mismatched: mismatched.length }, null, 2));
  const ok =
    result.code === 0 && result.summary?.failed === 0 && result.summary.files === count && mismatched.length === 0;
  process.exitCode = ok && result.early === 0 ? 0 : 1;
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
