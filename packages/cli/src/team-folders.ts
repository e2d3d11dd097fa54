/**
 * Folder rules (`pisync team share-folder PATH TEAM`): a setting of this machine saying that new
 * sessions whose folder is PATH or under it go in TEAM once they are first backed up.
 */
import { readFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import * as z from "zod/mini";
import type { Api } from "./api.js";
import { writeAtomic } from "./files.js";
import { configDir, type Env } from "./paths.js";

/** One rule: sessions in `path` (absolute) or below go in `team` (a team id). */
export const TeamFolder = z.object({ path: z.string(), team: z.string() });
export type TeamFolder = z.infer<typeof TeamFolder>;

const Rules = z.object({ folders: z.array(TeamFolder) });

/** Where the rules are kept: beside the login, in `team-folders.json`. */
export function teamFoldersPath(env: Env = process.env): string {
  return join(configDir(env), "team-folders.json");
}

/** The saved rules; none when there is no file or it is not one this version wrote. */
export function loadTeamFolders(env: Env = process.env): TeamFolder[] {
  try {
    const parsed = Rules.safeParse(JSON.parse(readFileSync(teamFoldersPath(env), "utf8")));
    return parsed.success ? parsed.data.folders : [];
  } catch {
    return [];
  }
}

/** Saves the rules (readable by their owner only, like the login). */
export function saveTeamFolders(folders: TeamFolder[], env: Env = process.env): void {
  writeAtomic(teamFoldersPath(env), `${JSON.stringify({ folders }, null, 2)}\n`, 0o600);
}

/** The team of a session's folder: the rule of the deepest folder holding it, if any. */
export function teamOfFolder(folders: readonly TeamFolder[], cwd: string | undefined): string | undefined {
  if (!cwd) return undefined;
  const at = resolve(cwd);
  let best: TeamFolder | undefined;
  for (const rule of folders) {
    const inside = at === rule.path || at.startsWith(rule.path.endsWith(sep) ? rule.path : `${rule.path}${sep}`);
    if (inside && (!best || rule.path.length > best.path.length)) best = rule;
  }
  return best?.team;
}

/** Puts a session in a team (`PUT /v1/sessions/:id/team`). */
export async function putInTeam(api: Api, sessionId: string, team: string): Promise<void> {
  await api.putJson(`/v1/sessions/${encodeURIComponent(sessionId)}/team`, { team });
}
