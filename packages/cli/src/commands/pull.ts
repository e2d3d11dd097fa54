/**
 * `pisync pull`: one session (by id, a share link, a team's), an older generation of one, or
 * every session of the account (`--all`). Apart from both so neither imports the other.
 */
import { EXIT } from "../cli-error.js";
import { safeJson, sanitize } from "../sanitize.js";
import type { Io } from "./common.js";
import { pullAll } from "./pull-all.js";
import { parsePullArgs, pullSession } from "./remote.js";

/** `pisync pull`: a session, an older generation of one, or a shared link; `--all` every session. */
export async function pull(argv: string[], io: Io): Promise<number> {
  if (argv.includes("--all")) return pullAll(argv, io);
  const args = parsePullArgs(argv);
  const pulled = await pullSession(args, io);
  io.out(args.json ? `${safeJson(pulled)}\n` : `${sanitize(pulled.path)}\n`);
  return EXIT.ok;
}
