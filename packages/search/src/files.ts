/**
 * The files an entry touched, for `file:` and the session page's list: the paths pi's file tools
 * name (`read`, `edit`, `write`, `ls`: `path`; `grep`, `find`: `path`, never their pattern) and
 * the folders a bash command `cd`s into. Session content is hostile: paths are bounded in number
 * and length, and a path with control characters is not kept.
 */
import { posix } from "node:path";

/** Paths kept per entry at most. */
export const MAX_FILES_PER_ENTRY = 32;
/** Characters kept of one path (a longer one is cut). */
export const MAX_PATH_CHARS = 512;

/** The tools whose `path` argument names a file or folder. */
const PATH_TOOLS = new Set(["read", "edit", "write", "ls", "grep", "find"]);
/** `cd DIR` at the start of a command or after `;`, `&&`, `||`, `|`, `(` or a new line. */
const CD = /(?:^|[;&|(\n])[ \t]*cd[ \t]+("[^"\n]*"|'[^'\n]*'|[^\s;&|)]+)/gu;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
const CONTROL = /[\u0000-\u001f\u007f]/u;

/**
 * A path as the index keeps it: `./` and repeated or trailing slashes gone, `..` resolved where
 * it can be; `undefined` when nothing usable is left.
 */
export function normalisePath(raw: string): string | undefined {
  const trimmed = raw.trim();
  if (trimmed === "" || CONTROL.test(trimmed)) return undefined;
  let path = posix.normalize(trimmed.slice(0, MAX_PATH_CHARS));
  if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
  return path === "." ? undefined : path;
}

/** The folders a shell command changes into with `cd` (not `cd` alone or `cd -`). */
export function cdTargets(command: string): string[] {
  const targets: string[] = [];
  for (const match of command.matchAll(CD)) {
    const word = match[1];
    const unquoted = /^["']/u.test(word) ? word.slice(1, -1) : word;
    if (unquoted !== "-") targets.push(unquoted);
  }
  return targets;
}

/** The raw paths one tool call names. */
function pathsOfCall(name: string, args: unknown): string[] {
  if (args === null || typeof args !== "object") return [];
  const record = args as Record<string, unknown>;
  if (PATH_TOOLS.has(name)) return typeof record.path === "string" ? [record.path] : [];
  if (name === "bash") return typeof record.command === "string" ? cdTargets(record.command) : [];
  return [];
}

/** A tool call, as the files it names are read from it. */
export interface ToolCallLike {
  name: string;
  arguments: unknown;
}

/**
 * The distinct normalised paths of an entry's tool calls and bash commands, in order, at most
 * {@link MAX_FILES_PER_ENTRY}.
 */
export function filesTouched(calls: readonly ToolCallLike[], commands: readonly string[] = []): string[] {
  const raw = [...calls.flatMap((call) => pathsOfCall(call.name, call.arguments)), ...commands.flatMap(cdTargets)];
  const files = new Set<string>();
  for (const path of raw) {
    if (files.size >= MAX_FILES_PER_ENTRY) break;
    const normal = normalisePath(path);
    if (normal !== undefined) files.add(normal);
  }
  return [...files];
}
