/**
 * Which of the cloud's sessions a command means: by project folder (a path prefix), by how
 * recently the conversation moved (its own last entry), and folder maps for a new home path.
 */
import { isAbsolute, resolve } from "node:path";
import type { SessionSummary } from "@pisync/protocol";
import * as z from "zod/mini";
import { parseDuration } from "../header.js";

/** When a session's conversation last moved: its own last entry, else its last backup (an older server). */
export function sessionTime(s: SessionSummary): string {
  return String(s.lastAt ?? s.updatedAt ?? "");
}

/** Whether `path` is `prefix` or inside it (whole path segments: /home/a is not inside /home/ab). */
export function underPrefix(path: string, prefix: string): boolean {
  const base = prefix.length > 1 ? prefix.replace(/\/+$/, "") : prefix;
  return path === base || path.startsWith(base === "/" ? "/" : `${base}/`);
}

export const SINCE_SHAPE = "a duration back from now: 30d, 12h, 90m, e.g. --since 30d";

/** `--since 30d` as seconds. */
export const Since = z.pipe(
  z.string().check(z.refine((v) => (parseDuration(v) ?? 0) > 0, SINCE_SHAPE)),
  z.transform((v) => parseDuration(v) as number),
);

/** `--cwd PREFIX`: an absolute folder (a relative one is resolved here). */
export const CwdPrefix = z.pipe(
  z.string().check(z.minLength(1, "a folder, e.g. --cwd ~/src")),
  z.transform((v) => (isAbsolute(v) ? v : resolve(v))),
);

/** What narrows a list of sessions. */
export interface SessionFilter {
  /** The session's folder is this one or inside it. */
  cwd?: string;
  /** Seconds: the conversation moved within this long. */
  since?: number;
}

/** The sessions the filter keeps (in the order given). */
export function filterSessions(sessions: SessionSummary[], filter: SessionFilter, now = Date.now()): SessionSummary[] {
  const after = filter.since === undefined ? undefined : now - filter.since * 1000;
  return sessions.filter(
    (s) =>
      (filter.cwd === undefined || (s.cwd !== undefined && underPrefix(s.cwd, filter.cwd))) &&
      (after === undefined || Date.parse(sessionTime(s)) >= after),
  );
}

export const MAP_SHAPE = "OLD=NEW, two absolute folders, e.g. --map /home/old=/home/new";

/** `--map /old/home=/new/home`. */
export const FolderMap = z.pipe(
  z.string().check(
    z.refine((v) => {
      const at = v.indexOf("=");
      return at > 0 && isAbsolute(v.slice(0, at)) && isAbsolute(v.slice(at + 1));
    }, MAP_SHAPE),
  ),
  z.transform((v) => {
    const at = v.indexOf("=");
    return { from: v.slice(0, at), to: v.slice(at + 1) };
  }),
);

/**
 * Where a session of folder `cwd` goes under folder maps: the longest `from` that holds it is
 * replaced by its `to`; undefined when no map applies.
 */
export function mapFolder(cwd: string, maps: readonly { from: string; to: string }[]): string | undefined {
  let best: { from: string; to: string } | undefined;
  for (const map of maps) {
    if (underPrefix(cwd, map.from) && (!best || map.from.length > best.from.length)) best = map;
  }
  if (!best) return undefined;
  const from = best.from.length > 1 ? best.from.replace(/\/+$/, "") : best.from;
  const rest = cwd.slice(from === "/" ? 0 : from.length);
  const to = best.to.length > 1 ? best.to.replace(/\/+$/, "") : best.to;
  return to === "/" ? rest || "/" : `${to}${rest.startsWith("/") || rest === "" ? rest : `/${rest}`}`;
}
