/**
 * Where things are: pi's session roots, pi's folder naming, and pisync's own config and state
 * (XDG base directories).
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve, sep } from "node:path";

export type Env = NodeJS.ProcessEnv;

function expandHome(path: string, env: Env): string {
  const home = env.HOME || homedir();
  return path === "~" ? home : path.startsWith("~/") ? join(home, path.slice(2)) : path;
}

/** pi's agent directory: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
export function piAgentDir(env: Env = process.env): string {
  return env.PI_CODING_AGENT_DIR
    ? expandHome(env.PI_CODING_AGENT_DIR, env)
    : join(env.HOME || homedir(), ".pi", "agent");
}

/** pi's sessions root. */
export function piSessionsRoot(env: Env = process.env): string {
  return join(piAgentDir(env), "sessions");
}

/**
 * The roots `watch` and `push` follow by default: pi's sessions directory, pi's
 * `PI_CODING_AGENT_SESSION_DIR` when set, and oh-my-pi's (`~/.omp/agent/sessions`) when present.
 */
export function defaultRoots(env: Env = process.env): string[] {
  const roots = [piSessionsRoot(env)];
  if (env.PI_CODING_AGENT_SESSION_DIR) roots.push(expandHome(env.PI_CODING_AGENT_SESSION_DIR, env));
  const omp = join(env.HOME || homedir(), ".omp", "agent", "sessions");
  if (existsSync(omp)) roots.push(omp);
  return [...new Set(roots.map((r) => resolve(r)))];
}

/** pi's folder name for a working directory: `/home/a/p` → `--home-a-p--`. */
export function piFolderName(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** pi's file name for a session: `<timestamp with : and . as ->_<id>.jsonl`. */
export function piFileName(timestamp: string, sessionId: string): string {
  return `${timestamp.replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
}

/** Whether `path` lies inside `root` (after resolving `..`). */
export function isInside(root: string, path: string): boolean {
  const r = resolve(root);
  const p = resolve(path);
  return p.startsWith(r.endsWith(sep) ? r : r + sep);
}

/** `$XDG_CONFIG_HOME/pisync` (~/.config/pisync). */
export function configDir(env: Env = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "pisync");
}

/** `$XDG_STATE_HOME/pisync` (~/.local/state/pisync). */
export function stateDir(env: Env = process.env): string {
  return join(env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state"), "pisync");
}
