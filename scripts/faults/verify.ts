/**
 * `npm run verify [-- --repair]` against a pair's stores, when the repository has it: its
 * exit code says whether anything is wrong.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./app.js";

export interface VerifyRun {
  /** Whether `npm run verify` exists here. */
  available: boolean;
  exitCode?: number | null;
  /** Its last lines of output. */
  output?: string;
}

/** Whether the repository has `npm run verify`. */
export function hasVerify(): boolean {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
    scripts?: Record<string, string>;
  };
  return Boolean(manifest.scripts?.verify);
}

/**
 * Runs `npm run verify -- <args>` with `env` (the store settings, as `npm start` takes them),
 * for at most `timeoutMs`.
 */
export async function runVerify(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<VerifyRun> {
  if (!hasVerify()) return { available: false };
  const child = spawn("npm", ["run", "--silent", "verify", "--", ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const exitCode = await new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  clearTimeout(timer);
  return { available: true, exitCode, output: output.trim().split("\n").slice(-15).join("\n") };
}
