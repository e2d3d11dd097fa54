/**
 * Where things are: pi's session roots, pi's folder naming, and pisync's own config and state
 * (XDG base directories).
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, posix, resolve, sep, win32 } from "node:path";
import { replaceControls } from "./sanitize.js";

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
 * The `sessionDir` of pi 1.x's user settings (`<agent>/settings.json`), when it names one: an
 * absolute or `~` path (a relative one resolves per working folder, which no watcher can know).
 */
export function settingsSessionDir(env: Env = process.env): string | undefined {
  try {
    const settings = JSON.parse(readFileSync(join(piAgentDir(env), "settings.json"), "utf8")) as unknown;
    const dir = (settings as { sessionDir?: unknown } | null)?.sessionDir;
    if (typeof dir !== "string" || dir === "") return undefined;
    const expanded = expandHome(dir, env);
    return isAbsolute(expanded) ? expanded : undefined;
  } catch {
    return undefined; // no settings, or not JSON: pi's default applies
  }
}

/**
 * The roots `watch` and `push` follow by default: pi's sessions directory, the `sessionDir` of
 * pi's settings and `PI_CODING_AGENT_SESSION_DIR` when set, and oh-my-pi's
 * (`~/.omp/agent/sessions`) when present.
 */
export function defaultRoots(env: Env = process.env): string[] {
  const roots = [piSessionsRoot(env)];
  const fromSettings = settingsSessionDir(env);
  if (fromSettings) roots.push(fromSettings);
  if (env.PI_CODING_AGENT_SESSION_DIR) roots.push(expandHome(env.PI_CODING_AGENT_SESSION_DIR, env));
  const omp = join(env.HOME || homedir(), ".omp", "agent", "sessions");
  if (existsSync(omp)) roots.push(omp);
  return [...new Set(roots.map((r) => resolve(r)))];
}

/**
 * pi's folder name for a working directory, as pi 1.x makes it: the path resolved first
 * (`/home/a/p/` and `/home/a/./p` → `--home-a-p--`), then its separators as `-`. A Windows path
 * resolves as on Windows. Control characters (never in a real project path, but a header's
 * `cwd` is hostile) become `-` too: no escape sequence reaches a folder name.
 */
export function piFolderName(cwd: string): string {
  const resolved = /^[A-Za-z]:[/\\]/.test(cwd) ? win32.resolve(cwd) : isAbsolute(cwd) ? posix.resolve(cwd) : cwd;
  const name = resolved.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-");
  return `--${replaceControls(name, () => "-")}--`;
}

/**
 * pi's file name for a session: `<timestamp with : and . as ->_<id>.jsonl`. pi's own timestamps
 * are ISO dates; anything else a header holds (`/`, `..`, controls) becomes `-`, so the name
 * is always one file name, never a path.
 */
export function piFileName(timestamp: string, sessionId: string): string {
  const time = timestamp.slice(0, 64).replace(/[^A-Za-z0-9+_-]/g, "-");
  return `${time}_${sessionId.replace(/[^A-Za-z0-9._-]/g, "-")}.jsonl`;
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
