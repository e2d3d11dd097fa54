/**
 * The test setup for code run as another user: a program under a private folder (a checkout in
 * root's home, any 0700 parent) is made reachable to `nobody` in a folder the test can share.
 */
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { canRun, NOBODY, runnableBy } from "../src/other-user.js";

const AS_ROOT = process.getuid?.() === 0;
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!AS_ROOT)("a program run as nobody (root only: only root can switch users)", () => {
  it("is linked out of a 0700 folder into a shared one, and runs there", () => {
    const hidden = mkdtempSync(join(tmpdir(), "pisync-private-"));
    const shared = mkdtempSync(join(tmpdir(), "pisync-shared-"));
    made.push(hidden, shared);
    const inner = join(hidden, "checkout", "node_modules", ".bin");
    mkdirSync(inner, { recursive: true });
    const program = join(inner, "node");
    copyFileSync(process.execPath, program);
    chmodSync(program, 0o755);
    chmodSync(hidden, 0o700);
    expect(canRun(program, NOBODY)).toBe(false);
    const placed = runnableBy(program, NOBODY, shared);
    expect(placed.startsWith(shared)).toBe(true);
    expect(canRun(placed, NOBODY)).toBe(true);
    // A program they can run already is used where it is.
    expect(runnableBy(placed, NOBODY, shared)).toBe(placed);
  });
});
