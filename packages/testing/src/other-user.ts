/**
 * Running a program as another user (a test run as root runs code as `nobody`, as Lambda runs
 * its function): that user must reach the program. A checkout under a private folder (root's
 * home, any 0700 parent) hides its `node_modules` from them, so a program there is linked (or,
 * across file systems, copied) into a folder the test made readable.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, linkSync } from "node:fs";
import { basename, join } from "node:path";

/** `nobody`'s uid and gid on Linux. */
export const NOBODY = 65534;

/** Whether user `uid` can run `program` (it answers `--version`). */
export function canRun(program: string, uid: number): boolean {
  const run = spawnSync(program, ["--version"], { uid, gid: uid, stdio: "ignore", timeout: 30_000 });
  return run.status === 0;
}

/**
 * `program` as user `uid` can run it: itself when they can, else a hard link (or a copy) of it
 * in `folder` (which they must be able to read; made 0755 here), executable by everyone.
 */
export function runnableBy(program: string, uid: number, folder: string): string {
  if (canRun(program, uid)) return program;
  chmodSync(folder, 0o755);
  const placed = join(
    folder,
    `${createHash("sha256").update(program).digest("hex").slice(0, 12)}-${basename(program)}`,
  );
  if (!existsSync(placed)) {
    try {
      linkSync(program, placed);
    } catch {
      copyFileSync(program, placed);
    }
  }
  chmodSync(placed, 0o755);
  return placed;
}
