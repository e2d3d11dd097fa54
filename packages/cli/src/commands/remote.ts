/** `ls` and `pull`: the sessions in the cloud, and bringing one onto this machine. */
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { IMPORTED_LINES_FIELD, titleSlotLength } from "@pisync/format";
import { SAFE_ID, SESSION_ID } from "@pisync/protocol";
import * as z from "zod/mini";
import { type Api, ApiError } from "../api.js";
import { blobsDirFor, fetchBlobs } from "../blobs.js";
import { CliError, EXIT } from "../cli-error.js";
import { requestTimeoutMs } from "../config.js";
import { readRange, writeAtomic } from "../files.js";
import { headerOf } from "../header.js";
import { httpRequest } from "../http.js";
import { confirmedState } from "../identity.js";
import { isInside, piFileName, piFolderName, pullFolder } from "../paths.js";
import { describeWait, withRetries } from "../retry.js";
import { safeJson, sanitize } from "../sanitize.js";
import { fingerprintOf, type StateStore } from "../state.js";
import { cloudSessions } from "./cloud-sessions.js";
import { api, type CommandHelp, formatBytes, type Io, parse } from "./common.js";
import { resolveSessionId } from "./ids.js";
import { CwdPrefix, filterSessions, Since, sessionTime } from "./session-filters.js";
import { teamId } from "./team.js";

const LS_HELP: CommandHelp = {
  usage: "pisync ls [--cwd DIR] [--since 30d] [--limit N] [--json]",
  args: [],
  help: `The sessions in the cloud, latest conversation first: id, when the conversation last
moved (its own last entry, not its last backup), entries, size, cost, the project folder and
the session's name (or its first message).

  --cwd DIR      only sessions of that folder or below it
  --since TIME   only sessions whose conversation moved within TIME: 30d, 12h, 90m
  --limit N      at most N sessions
  --json         one JSON document: { sessions: [...] }

examples:
  pisync ls --since 7d
  pisync ls --cwd ~/src/app --limit 20
  pisync ls --json | jq -r '.sessions[0].id'`,
};

/** The sessions in the cloud, newest first. */
export async function ls(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { json: { type: "boolean" }, cwd: { type: "string" }, since: { type: "string" }, limit: { type: "string" } },
    z.object({
      json: z.optional(z.boolean()),
      cwd: z.optional(CwdPrefix),
      since: z.optional(Since),
      limit: z.optional(
        z.pipe(z.string().check(z.regex(/^[1-9]\d{0,5}$/, "a number from 1, e.g. --limit 20")), z.transform(Number)),
      ),
      positionals: z.tuple([]),
    }),
    LS_HELP,
  );
  // Dated by the conversation's own last entry; filtered and cut here.
  const sessions = filterSessions(await cloudSessions(api(io)), { cwd: args.cwd, since: args.since })
    .sort((a, b) => sessionTime(b).localeCompare(sessionTime(a)) || b.id.localeCompare(a.id))
    .slice(0, args.limit);
  if (args.json) {
    io.out(`${safeJson({ sessions }, 2)}\n`);
    return EXIT.ok;
  }
  for (const s of sessions) {
    const title = s.name ?? s.firstMessage ?? "";
    io.out(
      `${sanitize(
        `${s.id}  ${sessionTime(s)}  ${s.entries} entries  ${formatBytes(Number(s.bytes))}  ${Number.isFinite(Number(s.cost ?? Number.NaN)) ? `$${Number(s.cost).toFixed(2)}` : "—"}  ${s.cwd ?? ""}  ${title}`,
      )}\n`,
    );
  }
  if (sessions.length === 0) {
    io.out(args.cwd || args.since ? "no sessions in the cloud match\n" : "no sessions in the cloud\n");
  }
  return EXIT.ok;
}

const SHARE_LINK = /^https?:\/\/[^\s]+\/s\/([A-Za-z0-9_-]+)\.[A-Za-z0-9._-]+$/;

const PULL_HELP: CommandHelp = {
  usage:
    "pisync pull ID|LINK [--cwd DIR] [--out FILE] [--root DIR] [--generation N] [--json]\n       pisync pull --team TEAM ID|OWNER:ID [--cwd DIR] [--out FILE] [--root DIR] [--json]",
  args: ["ID|LINK"],
  help: `Brings a session from the cloud where its writer looks for it, byte for byte, so that
\`pi --resume\` (or \`omp --resume\`) in that folder lists it; \`watch\` then continues it
from where the cloud copy ends. A pi session goes to <pi sessions>/--<cwd>--/. A session whose
file starts with oh-my-pi's title slot goes to omp's tree when this machine has ~/.omp:
~/.omp/agent/sessions/<folder>/, the folder named as omp names it (-<path under home>, e.g.
~/proj → -proj; -tmp-<path> under the temp folder; --<absolute path>-- elsewhere). The file
is <timestamp>_<id>.jsonl. Never overwrites a different file; never writes outside the
sessions root.

A share link (https://…/s/…) is imported as a new session of this machine (a fork: a new id,
its header's parentSession is pisync-share:<share id>; the link itself, a read credential, is
not kept; pisyncImported counts the lines that came with it, whose usage insights leave out).
Needs no login.

With --team, a session of that team (yours or another member's, \`pisync team ls TEAM\`
lists them) is imported the same way, as a fork of your own: masked as a share link is, its
header's parentSession is pisync-team:<team>/<owner>:<id>, its lines counted in
pisyncImported. ID is enough when no other member has a session of that id; OWNER:ID always.

  --team TEAM       a session of this team (its id or name)
  --cwd DIR         file it under another project folder (the header keeps the original cwd)
  --out FILE        write it to FILE instead (not tracked by watch)
  --root DIR        the sessions root (default: the writer's, as above; under ~/.omp folders
                    are named as omp names them, elsewhere as pi does)
  --generation N    an older generation (see \`pisync generations ID\`), imported as a new
                    session forked from it (parentSession pisync-session:<id>@<N>), or with
                    --out its exact bytes; the current copy is not touched
  --json            print { path, sessionId, already, parentSession } instead of the path

examples:
  pisync pull 0196a1b2-…                        # where pi on this machine finds it
  pisync pull 0196a1b2-… --cwd ~/src/app        # the project lives elsewhere here
  pisync generations 0196a1b2-…                 # then an older copy, beside the current one:
  pisync pull 0196a1b2-… --generation 1
  pisync pull https://pisync.example.com/s/AbC….k1.xyz --cwd .
  pisync pull --team acme mia:0196a1b2-… --cwd ~/src/app   # continue a colleague's session`,
};

const PullArgs = z.object({
  cwd: z.optional(z.string().check(z.minLength(1, "a folder, e.g. --cwd ~/src/app"))),
  out: z.optional(z.string().check(z.minLength(1, "a file, e.g. --out ./session.jsonl"))),
  root: z.optional(z.string().check(z.minLength(1, "a folder, e.g. --root ~/.omp/agent/sessions"))),
  generation: z.optional(
    z.pipe(
      z.string().check(z.regex(/^[1-9]\d{0,8}$/, "a generation number from 1, e.g. --generation 2")),
      z.transform(Number),
    ),
  ),
  team: z.optional(z.string().check(z.minLength(1, "a team's id or name, e.g. --team acme"))),
  json: z.optional(z.boolean()),
  positionals: z.tuple([
    z
      .string()
      .check(
        z.refine(
          (v) => SESSION_ID.test(v) || SHARE_LINK.test(v) || TEAM_SESSION.test(v),
          "a session id (letters, digits, . _ -; up to 224, as `pisync ls` shows) or a share link (https://host/s/…), e.g. pisync pull 0196a1b2-c3d4-…",
        ),
      ),
  ]),
});

/** A team session named by its owner: `OWNER:ID` (`pull --team`). */
const TEAM_SESSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}:[A-Za-z0-9][A-Za-z0-9._-]{0,223}$/;
/** What `pull` is asked: the session id or share link, and where to put it. */
export type PullArgs = z.infer<typeof PullArgs>;

/** Where a pull put the session, and whether it was there already. */
export interface Pulled {
  path: string;
  sessionId: string;
  already: boolean;
  parentSession?: string;
  /** The bytes brought (a session's current copy). */
  bytes?: number;
}

/** What many pulls share (`pull --all`): one client, and one record of what was confirmed (flushed by the caller). */
export interface PullContext {
  client: Api;
  state: StateStore;
}

/**
 * The folder of the sessions root for a working directory: where the writer looks (`bytes`
 * starting with an oh-my-pi title slot: omp's tree when this machine has `~/.omp`; see `pullFolder`).
 */
function sessionFolder(args: PullArgs, cwd: string, io: Io, bytes?: Uint8Array): { root: string; folder: string } {
  const omp = bytes !== undefined && titleSlotLength(bytes.subarray(0, 4096)) !== undefined;
  return pullFolder({ root: args.root, cwd, omp }, io.env);
}

/** The header of a session file on disk (read from its start), if it has one. */
function headerOfFile(path: string): Record<string, unknown> | undefined {
  try {
    return headerOf(readRange(path, 0, 64 * 1024))?.header;
  } catch {
    return undefined;
  }
}

/**
 * A fork of `origin` made before in `folder` that holds everything `rest` holds (the lines
 * after the header; continuing the fork since keeps it the same fork).
 */
function findFork(folder: string, origin: string, rest: Buffer): { path: string; id: string } | undefined {
  let names: string[];
  try {
    names = readdirSync(folder).filter((n) => n.endsWith(".jsonl"));
  } catch {
    return undefined;
  }
  for (const name of names) {
    const path = join(folder, name);
    const header = headerOfFile(path);
    if (header?.parentSession !== origin || typeof header.id !== "string") continue;
    const bytes = readFileSync(path);
    const found = headerOf(bytes);
    if (found && bytes.subarray(found.end, found.end + rest.length).equals(rest)) return { path, id: header.id };
  }
  return undefined;
}

/** Complete lines in `bytes` (its newlines). */
function lineCount(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, at + 1)) count++;
  return count;
}

/**
 * A session file's bytes, imported as a new session of this machine: a new id and timestamp,
 * the cwd it is filed under, and `origin` in its header's `parentSession` (as pi records a
 * fork's origin). A share's fork (`shared`) also says in its header how many lines came with
 * it (`pisyncImported`): their usage was spent by the share's author, so the server leaves it
 * out of this user's insights (pi reads past the field). A generation's fork carries no such
 * mark: that usage is the user's own, and a replaced generation no longer counts in its session.
 * A fork of the same origin made before, with these lines, is found instead.
 */
function importFork(bytes: Buffer, origin: string, args: PullArgs, io: Io, shared = false): Pulled {
  const found = headerOf(bytes);
  if (!found) throw new CliError("the session has no header: nothing to import");
  const header: Record<string, unknown> = found.header;
  const cwd = args.cwd ? resolve(args.cwd) : typeof header.cwd === "string" ? header.cwd : "/";
  const rest = bytes.subarray(found.end);
  const { root, folder } = sessionFolder(args, cwd, io);
  const before = args.out ? undefined : findFork(folder, origin, rest);
  if (before) return { path: before.path, sessionId: before.id, already: true, parentSession: origin };
  const id = randomUUID();
  const timestamp = new Date().toISOString();
  const lines = rest.length && rest[rest.length - 1] !== 0x0a ? Buffer.concat([rest, Buffer.from("\n")]) : rest;
  const imported: Record<string, unknown> = { ...header, id, timestamp, cwd, parentSession: origin };
  // Every line of a share is the author's (a mark the author's header had is replaced); a
  // generation keeps its own header's mark, which counts the same lines.
  if (shared) imported[IMPORTED_LINES_FIELD] = lineCount(lines);
  const body = Buffer.concat([Buffer.from(`${JSON.stringify(imported)}\n`), lines]);
  const target = args.out ? resolve(args.out) : join(folder, piFileName(timestamp, id));
  if (!args.out && !isInside(root, target)) throw new CliError(`refusing to write outside ${root}: ${target}`);
  if (existsSync(target)) throw new CliError(`a file is already at ${target}; not overwritten`);
  writeAtomic(target, body, 0o644);
  return { path: target, sessionId: id, already: false, parentSession: origin };
}

/**
 * A shared conversation, imported as a new session of this machine. The fork names its origin
 * by the share's id only: the link is a read credential and must not travel with the file.
 */
async function pullLink(link: string, args: PullArgs, io: Io): Promise<Pulled> {
  const url = new URL(link);
  const shareId = (SHARE_LINK.exec(link) as RegExpExecArray)[1];
  let response: Awaited<ReturnType<typeof httpRequest>>;
  const deadlineMs = requestTimeoutMs(io.env);
  try {
    // Anonymous, and waited out like any request when the server is busy (the link's own limit).
    response = await withRetries(
      "GET the shared file",
      () =>
        httpRequest("GET", `${url.origin}${url.pathname}/raw`, { "Accept-Encoding": "identity" }, undefined, {
          deadlineMs,
        }),
      { onWait: (wait) => io.err(`${sanitize(describeWait(wait))}\n`) },
    );
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`could not reach ${url.origin}: ${(error as Error).message}`);
  }
  if (response.status === 404) throw new CliError("no such link", EXIT.notFound);
  if (response.status === 410) throw new CliError("this link has expired or was revoked", EXIT.notFound);
  if (response.status !== 200) throw new CliError(`the link answered HTTP ${response.status}`);
  if (!headerOf(response.body)) throw new CliError("the shared file has no session header");
  const pulled = importFork(response.body, `pisync-share:${shareId}`, args, io, true);
  io.err(
    `${sanitize(
      pulled.already
        ? `already here: the shared conversation is session ${pulled.sessionId}`
        : `imported the shared conversation as session ${pulled.sessionId} (forked from share ${shareId})`,
    )}\n`,
  );
  return pulled;
}

/**
 * A team session, imported as a new session of this machine: a fork of the member's own, as a
 * share link's (its bytes masked by the server, its lines counted as imported: their usage was
 * its owner's). Its origin names the team, the owner and the session, no credential.
 */
async function pullTeam(team: string, ref: string, args: PullArgs, io: Io): Promise<Pulled> {
  const client = api(io);
  const id = await teamId(client, team);
  let answer: Awaited<ReturnType<Api["teamRaw"]>>;
  try {
    answer = await client.teamRaw(id, ref);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new CliError(`no session ${ref} in team ${team} (pisync team ls ${team} lists them)`, EXIT.notFound);
    }
    throw error;
  }
  const bytes = Buffer.from(answer.bytes);
  const header = headerOf(bytes)?.header;
  if (!header) throw new CliError("the team session has no session header");
  const sessionId = typeof header.id === "string" ? header.id : ref.slice(ref.indexOf(":") + 1);
  // The server's word for the owner, if it is a user id; else the one given (`OWNER:ID`).
  const owner = answer.owner && SAFE_ID.test(answer.owner) ? answer.owner : ref.slice(0, Math.max(0, ref.indexOf(":")));
  const pulled = importFork(bytes, `pisync-team:${id}/${owner}:${sessionId}`, args, io, true);
  io.err(
    `${sanitize(
      pulled.already
        ? `already here: ${owner}:${sessionId} of the team is session ${pulled.sessionId}`
        : `imported ${owner}:${sessionId} of the team as session ${pulled.sessionId} (a fork of your own)`,
    )}\n`,
  );
  return pulled;
}

/** Bytes of a session in the cloud (the current generation, or `generation`); 404 says which is missing. */
async function cloudSession(io: Io, id: string, generation?: number, shared?: Api) {
  const client = shared ?? api(io);
  try {
    const meta = await client.json<{ generation: number; bytes: number }>(`/v1/sessions/${id}`);
    if (generation !== undefined && generation > meta.generation) {
      throw new CliError(
        `${id} has generations 1 to ${meta.generation}, not ${generation} (see pisync generations ${id})`,
        EXIT.notFound,
      );
    }
    // Asked for by number, the current one too: a replace landing meanwhile cannot give the
    // next generation's bytes under this one's number.
    const current = generation === undefined || generation === meta.generation;
    const bytes = await client.raw(id, current ? { generation: meta.generation, size: meta.bytes } : { generation });
    return { client, meta, bytes: Buffer.from(bytes) };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      const what = generation === undefined ? `no session ${id}` : `no generation ${generation} of ${id}`;
      throw new CliError(`${what} in the cloud (pisync ls lists them)`, EXIT.notFound);
    }
    throw error;
  }
}

/** An older generation: its exact bytes at --out, or a new session forked from it. */
async function pullGeneration(id: string, generation: number, args: PullArgs, io: Io): Promise<Pulled> {
  const { meta, bytes } = await cloudSession(io, id, generation);
  // The current generation is an ordinary pull.
  if (generation === meta.generation && !args.out) return pullCurrent(id, args, io);
  const origin = `pisync-session:${id}@${generation}`;
  if (args.out) {
    const target = resolve(args.out);
    if (existsSync(target) && !readFileSync(target).equals(bytes)) {
      throw new CliError(`a different file is already at ${target}; not overwritten`);
    }
    const already = existsSync(target);
    if (!already) writeAtomic(target, bytes, 0o644);
    io.err(`${sanitize(`${already ? "already there" : `wrote generation ${generation} of ${id}`}: ${target}`)}\n`);
    return { path: target, sessionId: id, already };
  }
  const pulled = importFork(bytes, origin, args, io);
  io.err(
    `${sanitize(
      pulled.already
        ? `already here: generation ${generation} of ${id} is session ${pulled.sessionId}`
        : `restored generation ${generation} of ${id} (${formatBytes(bytes.length)}) as a new session ${pulled.sessionId}; the current copy is untouched`,
    )}\n`,
  );
  return pulled;
}

/**
 * Writes the session's exact bytes where pi looks for it: `<root>/--<cwd>--/<timestamp>_<id>.jsonl`,
 * so that `pi --resume` in that folder lists it. Never overwrites a different file, never
 * writes outside the sessions root. Afterwards `watch` continues from where the cloud ends.
 */
export async function pullCurrent(id: string, args: PullArgs, io: Io, shared?: PullContext): Promise<Pulled> {
  const { client, meta, bytes } = await cloudSession(io, id, undefined, shared?.client);
  const header = headerOf(bytes)?.header;
  if (!header || header.id !== id) throw new CliError(`the cloud copy of ${id} has no header naming it`);
  const originalCwd = typeof header.cwd === "string" ? header.cwd : "/";
  const cwd = args.cwd ? resolve(args.cwd) : originalCwd;
  const { root, folder } = sessionFolder(args, cwd, io, bytes);
  const timestamp = typeof header.timestamp === "string" ? header.timestamp : new Date(0).toISOString();
  const target = args.out ? resolve(args.out) : join(folder, piFileName(timestamp, id));
  if (!args.out && !isInside(root, target)) throw new CliError(`refusing to write outside ${root}: ${target}`);
  const already = existsSync(target);
  if (already) {
    if (!bytes.equals(readFileSync(target))) {
      throw new CliError(`a different file is already at ${target}; not overwritten (use --out to write elsewhere)`);
    }
    io.err(`${sanitize(`already here: ${target}`)}\n`);
  } else {
    writeAtomic(target, bytes, 0o644);
    io.err(
      `${sanitize(`pulled ${id} (${formatBytes(bytes.length)}, generation ${meta.generation}) into ${target}`)}\n`,
    );
  }
  const blobs = await fetchBlobs(client, target, bytes);
  if (blobs) io.err(`fetched ${blobs} image blob${blobs === 1 ? "" : "s"} into ${blobsDirFor(target)}\n`);
  if (cwd !== originalCwd) {
    io.err(
      `${sanitize(
        `cwd remapped: ${originalCwd} → ${cwd} (the file is in ${piFolderName(cwd)}; its header still says ${originalCwd})`,
      )}\n`,
    );
  }
  // `watch` continues from where the cloud copy ends.
  const complete = bytes.lastIndexOf(0x0a) + 1;
  const { state } = shared ?? (await confirmedState(client, io.env));
  state.set(target, {
    sessionId: id,
    generation: meta.generation,
    sent: complete,
    fingerprint: fingerprintOf(bytes, complete),
    local: complete,
    updatedAt: new Date().toISOString(),
  });
  if (!shared) state.flush();
  return { path: target, sessionId: id, already, bytes: bytes.length };
}

/**
 * `pisync pull`'s arguments (`ID|LINK [--cwd DIR] [--out FILE] [--root DIR] [--generation N]`),
 * checked as the command checks them. Throws a `CliError`: exit 2 naming what is wrong, or
 * exit 0 with the help for `--help`.
 */
export function parsePullArgs(argv: string[]): PullArgs {
  const args = parse(
    argv,
    {
      cwd: { type: "string" },
      out: { type: "string" },
      root: { type: "string" },
      generation: { type: "string" },
      team: { type: "string" },
      json: { type: "boolean" },
    },
    PullArgs,
    PULL_HELP,
  );
  const [given] = args.positionals;
  const problem =
    args.team !== undefined
      ? SHARE_LINK.test(given)
        ? "--team goes with a team session's ID or OWNER:ID, not a share link"
        : args.generation !== undefined
          ? "--team brings a team session's current copy: --generation does not go with it"
          : undefined
      : TEAM_SESSION.test(given) && !SESSION_ID.test(given)
        ? "OWNER:ID names a team session: give its team with --team TEAM"
        : undefined;
  if (problem)
    throw new CliError(`pisync pull: ${problem}\n(pisync pull --help for the options and examples)`, EXIT.usage);
  if (!SESSION_ID.test(args.positionals[0]) && args.generation !== undefined) {
    throw new CliError(
      "pisync pull: --generation goes with a session id, not a share link\n(pisync pull --help for the options and examples)",
      EXIT.usage,
    );
  }
  return args;
}

/**
 * The engine of `pisync pull`: a session, an older generation of one, or a shared link, brought
 * onto this machine (what it did is said on `io.err`). Throws a `CliError` with the exit code
 * (3 without a login, 4 when the session or link is not there, 1 for other failures).
 * @example const pulled = await pullSession(parsePullArgs([id, "--cwd", dir]), io); // { path, sessionId, already }
 */
export async function pullSession(args: PullArgs, io: Io): Promise<Pulled> {
  const [given] = args.positionals;
  if (args.team !== undefined) return pullTeam(args.team, given, args, io);
  if (!SESSION_ID.test(given)) return pullLink(given, args, io);
  // A unique prefix (≥ 6 characters) stands for the whole id.
  const ref = await resolveSessionId(api(io), given);
  if (args.generation !== undefined) return pullGeneration(ref, args.generation, args, io);
  return pullCurrent(ref, args, io);
}
