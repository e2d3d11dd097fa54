/**
 * Where things are: pi's session roots, pi's folder naming, and pisync's own config and state
 * (XDG base directories).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, join, posix, relative, resolve, sep, win32 } from "node:path";
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

/** oh-my-pi's folder: `~/.omp`. */
export function ompDir(env: Env = process.env): string {
  return join(env.HOME || homedir(), ".omp");
}

/** oh-my-pi's sessions root: `~/.omp/agent/sessions`. */
export function ompSessionsRoot(env: Env = process.env): string {
  return join(ompDir(env), "agent", "sessions");
}

/** The sessions roots of oh-my-pi's profiles present: `~/.omp/profiles/<name>/agent/sessions`. */
export function ompProfileRoots(env: Env = process.env): string[] {
  const profiles = join(ompDir(env), "profiles");
  let names: string[];
  try {
    names = readdirSync(profiles, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
  return names.map((name) => join(profiles, name, "agent", "sessions")).filter((root) => existsSync(root));
}

/** Where oh-my-pi's collab guests keep their replicas of a host's session: `~/.omp/collab`. */
export function ompCollabRoot(env: Env = process.env): string {
  return join(ompDir(env), "collab");
}

/**
 * The roots `watch` and `push` follow by default: pi's sessions directory, the `sessionDir` of
 * pi's settings and `PI_CODING_AGENT_SESSION_DIR` when set, and oh-my-pi's when present: its
 * sessions (`~/.omp/agent/sessions`), each profile's (`~/.omp/profiles/<name>/agent/sessions`)
 * and its collab guests' replicas (`~/.omp/collab`).
 */
export function defaultRoots(env: Env = process.env): string[] {
  const roots = [piSessionsRoot(env)];
  const fromSettings = settingsSessionDir(env);
  if (fromSettings) roots.push(fromSettings);
  if (env.PI_CODING_AGENT_SESSION_DIR) roots.push(expandHome(env.PI_CODING_AGENT_SESSION_DIR, env));
  const omp = ompSessionsRoot(env);
  if (existsSync(omp)) roots.push(omp);
  roots.push(...ompProfileRoots(env));
  if (existsSync(ompCollabRoot(env))) roots.push(ompCollabRoot(env));
  return [...new Set(roots.map((r) => resolve(r)))];
}

/**
 * What a root is, for `status`: `pi`, `omp`, `omp profile <name>`, `omp collab (replicas)` (a
 * guest's copies of another machine's sessions, not this user's own), or `folder` (one given).
 */
export function rootKind(root: string, env: Env = process.env): string {
  const r = resolve(root);
  if (r === resolve(piSessionsRoot(env))) return "pi";
  if (r === resolve(ompSessionsRoot(env))) return "omp";
  if (r === resolve(ompCollabRoot(env))) return "omp collab (replicas)";
  const profiles = resolve(ompDir(env), "profiles");
  const rel = relative(profiles, r).split(sep);
  if (rel.length === 3 && rel[1] === "agent" && rel[2] === "sessions" && !rel[0].startsWith("..")) {
    return `omp profile ${rel[0]}`;
  }
  return "folder";
}

/** The root (of `roots`) a file lies in, the innermost when several hold it. */
export function rootOf(file: string, roots: readonly string[]): string | undefined {
  return roots
    .filter((root) => isInside(root, file))
    .sort((a, b) => b.length - a.length)
    .at(0);
}

/**
 * oh-my-pi's folder name for a working directory (its `getDefaultSessionDirName`): under the
 * home folder `-<path relative to it>` (`~/proj` → `-proj`, the home folder itself `-`), under
 * the temp folder `-tmp-<relative path>`, elsewhere pi's `--<absolute path>--`.
 */
export function ompFolderName(cwd: string, env: Env = process.env): string {
  const resolved = resolve(cwd);
  const under = (base: string) => {
    const rel = relative(resolve(base), resolved);
    return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel)) ? rel : undefined;
  };
  const encode = (rel: string) => replaceControls(rel.replace(/[/\\:]/g, "-"), () => "-");
  const home = under(env.HOME || homedir());
  if (home !== undefined) return `-${encode(home)}`;
  const temp = under(env.TMPDIR || tmpdir());
  if (temp !== undefined) return temp ? `-tmp-${encode(temp)}` : "-tmp";
  return piFolderName(resolved);
}

/**
 * Where `pull` files a session: oh-my-pi's tree (`~/.omp/agent/sessions/<omp folder>`) when the
 * file carries an omp title slot and this machine has `~/.omp`, else pi's
 * (`<pi sessions>/--<cwd>--`). `root` (`--root`) overrides the tree: named as omp names its folders
 * when it lies under `~/.omp`, as pi does elsewhere.
 */
export function pullFolder(
  options: { root?: string; cwd: string; omp: boolean },
  env: Env = process.env,
): { root: string; folder: string } {
  const given = options.root === undefined ? undefined : resolve(options.root);
  // A root given is named as its writer names it: omp's under ~/.omp, pi's elsewhere.
  const omp = options.omp && (given ? isInside(ompDir(env), given) : existsSync(ompDir(env)));
  const root = given ?? (omp ? ompSessionsRoot(env) : piSessionsRoot(env));
  return { root, folder: join(root, omp ? ompFolderName(options.cwd, env) : piFolderName(options.cwd)) };
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
