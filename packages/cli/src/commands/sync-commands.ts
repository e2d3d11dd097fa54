/** `watch`, `push` and `status`: backing up this machine's session files. */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import * as z from "zod/mini";
import { CliError, EXIT } from "../cli-error.js";
import { mergeEnabled } from "../config.js";
import {
  type Confirmed,
  confirmedState,
  type Identity,
  lastKnownState,
  rememberIdentity,
  scopeOf,
  whoami,
} from "../identity.js";
import { createLogger } from "../log.js";
import { defaultRoots, rootKind, rootOf } from "../paths.js";
import { describeWait } from "../retry.js";
import { safeJson, sanitize } from "../sanitize.js";
import { StateStore } from "../state.js";
import { completeLengthOf, sessionIdOf, syncFile, Transient, Unauthorized } from "../sync.js";
import { describeSyncStatus, sessionSyncStatus } from "../sync-status.js";
import { loadTeamFolders } from "../team-folders.js";
import { type Rescoped, sessionFiles, Watcher } from "../watch.js";
import { statusLogger } from "../watch-status.js";
import { cloudSessions } from "./cloud-sessions.js";
import { api, type CommandHelp, formatBytes, type Io, parse, refusedToken } from "./common.js";
import { type Progress, ProgressBar } from "./progress.js";

const rootsOption = { root: { type: "string" as const, multiple: true }, json: { type: "boolean" as const } };
const RootArgs = z.object({
  root: z.optional(z.array(z.string().check(z.minLength(1, "a folder, e.g. --root ~/.pi/agent/sessions")))),
  json: z.optional(z.boolean()),
  positionals: z.array(z.string()),
});

const mergeOption = { "no-merge": { type: "boolean" as const } };
const MergeArgs = { "no-merge": z.optional(z.boolean()) };

const MERGE_HELP = `  --no-merge   a session continued on another machine too becomes a new generation (the
               old rule) instead of being merged by entry id; PISYNC_MERGE=off sets it too`;

const ROOTS_HELP = `  --root DIR   a folder of session files to follow instead of the defaults (repeatable);
               default: pi's ~/.pi/agent/sessions (or $PI_CODING_AGENT_DIR/sessions),
               $PI_CODING_AGENT_SESSION_DIR, and oh-my-pi's ~/.omp/agent/sessions when present`;

const WATCH_HELP: CommandHelp = {
  usage: "pisync watch [--root DIR]... [--no-merge] [--poll-cloud SECONDS] [--json]",
  args: [],
  help: `Follows every session file under the roots and sends each new complete line shortly
after pi writes it; leave it running (it waits for a root that does not exist yet). A session
another machine continued too is merged by entry id: each file gets the other's lines appended.
Stops on Ctrl-C; a refused token stops it with exit code 3.

${ROOTS_HELP}
${MERGE_HELP}
  --poll-cloud SECONDS  how often the cloud is asked for lines other machines appended
               (default 15; 0: only when a file changes here)
  --json       one JSON object per event on stderr

examples:
  pisync watch
  pisync watch --root ~/.pi/agent/sessions --root /srv/pi/sessions --json`,
};

const PUSH_HELP: CommandHelp = {
  usage: "pisync push [FILE...] [--root DIR]... [--no-merge] [--json]",
  args: ["FILE..."],
  help: `Backs up every session file under the roots now (or just the files named), with a
progress bar on a terminal; says so when there is nothing to send. Interrupted, it resumes
where it stopped when run again. Exits 1 when a file could not be sent. A session another
machine continued too is merged by entry id (both copies end up with every entry).

${ROOTS_HELP}
${MERGE_HELP}
  --json       events on stderr, and { files, bytes, failed } on stdout

examples:
  pisync push
  pisync push ~/.pi/agent/sessions/--home-me-app--/2026-…jsonl`,
};

const STATUS_HELP: CommandHelp = {
  usage: "pisync status [--all] [--root DIR]... [--json]",
  args: [],
  help: `Per session file: the bytes the server confirmed against the file's size, the
generation, what is pending, the last error, and the sync state: in sync, pending, merged
(how many entries came from the cloud and from which machines, how many went from here), or
diverged (a new generation was made, and why: rewritten, truncated, another header, a conflict
on an entry, not a pi session, merge turned off); and whether another machine wrote a newer
generation than this file's (then this file is behind the cloud's copy). Files deleted here
are left out (their cloud copies stay) unless --all.

  --all        list files deleted on this machine too
${ROOTS_HELP}
  --json       one JSON document: { files: [...] } (deleted files only with --all); each
               file's "sync" is { state, reason?, fromCloud?, toCloud?, devices? }

examples:
  pisync status
  pisync status --json | jq '.files[] | select(.pending > 0) | .file'`,
};

/** Said when the address now reaches another server's data or another account than last time. */
function anotherScope(endpoint: string, previous: Identity): string {
  return `${endpoint} is not the server and account this machine last backed up to (server ${previous.server.id}, account ${previous.user}): nothing counts as backed up until this server confirms it`;
}

function rootsOf(args: { root?: string[] }, io: Io): string[] {
  return args.root?.length ? args.root.map((r) => resolve(r)) : defaultRoots(io.env);
}

/** Follows every session file under the roots until stopped (SIGINT/SIGTERM). */
export async function watchCommand(argv: string[], io: Io, signal?: AbortSignal): Promise<number> {
  const args = parse(
    argv,
    { ...rootsOption, ...mergeOption, "poll-cloud": { type: "string" } },
    z.extend(RootArgs, {
      ...MergeArgs,
      "poll-cloud": z.optional(
        z.pipe(
          z.string().check(z.regex(/^\d{1,5}(\.\d{1,3})?$/, "a number of seconds, e.g. --poll-cloud 15")),
          z.transform(Number),
        ),
      ),
      positionals: z.tuple([]),
    }),
    WATCH_HELP,
  );
  const roots = rootsOf(args, io);
  const merge = mergeEnabled(io.env, args["no-merge"]);
  // Every event also goes to the status file `pisync service status` reads.
  const log = statusLogger(
    createLogger(args.json ?? false, io.err),
    { endpoint: api(io).login.endpoint, roots },
    io.env,
  );
  // A busy server is waited out inside each request; the log says so.
  const client = api(io, { onWait: (wait) => log.event("waiting", { ...wait }) });
  // What was confirmed with this server's data and this account (asked once, at the start; a
  // server not up yet: what this machine last knew of it, each file being asked about anyway).
  let confirmed: Confirmed;
  try {
    confirmed = await confirmedState(client, io.env);
  } catch (error) {
    if (!(error instanceof Transient)) throw error;
    confirmed = lastKnownState(client.login.endpoint, io.env);
  }
  const { state } = confirmed;
  const endpoint = client.login.endpoint;
  // Asked again while it runs (and after every outage): a server started afresh at this
  // address, or another account, confirmed nothing of what this machine sent.
  let scope = scopeOf(confirmed.identity, endpoint);
  const rescope = async (): Promise<Rescoped | undefined> => {
    const now = await whoami(client);
    const next = scopeOf(now, endpoint);
    if (next === scope) return undefined;
    scope = next;
    if (now) rememberIdentity(endpoint, now, io.env);
    return {
      state: new StateStore(next, io.env),
      fields: { endpoint, server: now?.server.id ?? null, user: now?.user ?? null },
    };
  };
  const pollCloud = args["poll-cloud"];
  const watcher = new Watcher(
    { api: client, state, log, merge, teamFolders: loadTeamFolders(io.env) },
    {
      roots,
      cloudPollMs: pollCloud === undefined ? undefined : Math.round(pollCloud * 1000),
      // The default roots grow while it runs (an omp profile made meanwhile); given ones do not.
      discoverRoots: args.root?.length ? undefined : () => defaultRoots(io.env),
      rescope,
    },
  );
  log.event("watching", { roots: roots.join(","), files: roots.reduce((n, r) => n + sessionFiles(r).length, 0) });
  watcher.start();
  const stop = () => watcher.stop();
  signal?.addEventListener("abort", stop);
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  await watcher.done;
  log.stop(watcher.refused ? EXIT.auth : EXIT.ok);
  // The server refused the token: the watcher stopped; scripts and service managers see 3.
  if (watcher.refused) throw new CliError(watcher.refused, EXIT.auth);
  return EXIT.ok;
}

/** One-shot backup of every session file (or the given ones), with progress; resumable. */
export async function push(argv: string[], io: Io): Promise<number> {
  const args = parse(argv, { ...rootsOption, ...mergeOption }, z.extend(RootArgs, MergeArgs), PUSH_HELP);
  const roots = rootsOf(args, io);
  const merge = mergeEnabled(io.env, args["no-merge"]);
  const files = args.positionals.length
    ? args.positionals.map((f) => resolve(f))
    : roots.flatMap((root) => sessionFiles(root));
  for (const file of files) if (!existsSync(file)) throw new CliError(`no such file: ${file}`, EXIT.notFound);
  const log = createLogger(args.json ?? false, args.json ? io.err : () => {});
  const bar = new ProgressBar(args.json ? { ...io, isTTY: false } : io);
  // A busy server is waited out; the bar (or the log) says for how long and why.
  const client = api(io, {
    onWait: (wait) => (args.json ? log.event("waiting", { ...wait }) : bar.say(sanitize(describeWait(wait)))),
  });
  // A refused token says so even when nothing is pending. What counts as sent is what this
  // server's data and this account confirmed: another server or account starts from nothing
  // confirmed (each file is then asked about, and what the server lacks is sent).
  const { state, previous } = await confirmedState(client, io.env);
  if (previous && !args.json) bar.say(sanitize(anotherScope(client.login.endpoint, previous)));
  const listed = await listedWhenUnconfirmed(client, state, files);
  const teamFolders = loadTeamFolders(io.env);
  const progress: Progress = {
    bytes: 0,
    totalBytes: files.reduce((sum, file) => {
      try {
        return sum + Math.max(0, completeLengthOf(file, statSync(file).size) - (state.get(file)?.sent ?? 0));
      } catch {
        return sum;
      }
    }, 0),
    files: 0,
    totalFiles: files.length,
  };
  const say = (line: string) => {
    if (!args.json) bar.say(sanitize(line));
  };
  let failed = 0;
  let changed = 0;
  // Ctrl-C: what the server confirmed is recorded, and the user told how to go on (exit 130).
  // Bytes in flight are safe to send again: the server's offsets make a resent batch a retry.
  const interrupted = () => {
    state.flush();
    bar.say(
      `interrupted after ${progress.files} of ${files.length} files (${formatBytes(progress.bytes)} sent): run \`pisync push\` again to resume where it stopped`,
    );
    process.exit(130);
  };
  process.on("SIGINT", interrupted);
  try {
    for (const file of files) {
      try {
        const before = progress.bytes;
        const result = await syncFile(file, {
          api: client,
          state,
          log,
          merge,
          teamFolders,
          listed,
          onProgress: (bytes) => {
            progress.bytes += bytes;
            bar.update(progress);
          },
        });
        if (result.status === "synced") {
          changed++;
          if (!io.isTTY) say(`sent ${file} (${formatBytes(progress.bytes - before || result.bytes)})`);
        }
        if (result.status === "merged") {
          changed++;
          say(
            `merged ${file}: ${result.fromCloud} entr${result.fromCloud === 1 ? "y" : "ies"} from the cloud, ${result.toCloud} sent from here`,
          );
        }
        if (result.status === "skipped") say(`skipped ${file}: ${result.reason}`);
      } catch (error) {
        if (error instanceof Unauthorized) throw refusedToken(client.login.endpoint);
        if (!(error instanceof Transient)) throw error;
        failed++;
        state.update(file, { lastError: error.message });
        say(`failed ${file}: ${error.message} (run push again to resume)`);
      }
      progress.files++;
      bar.update(progress);
    }
  } finally {
    process.removeListener("SIGINT", interrupted);
  }
  state.flush();
  bar.finish(progress, changed > 0);
  if (args.json) io.out(`${safeJson({ files: files.length, bytes: progress.bytes, failed })}\n`);
  else if (files.length === 0) io.err(`nothing to send: no session files in ${roots.join(", ")}\n`);
  else if (changed === 0 && failed === 0) {
    io.err(`nothing to send: ${files.length === 1 ? "the file is" : `all ${files.length} files are`} backed up\n`);
  } else {
    io.err(
      `sent ${formatBytes(progress.bytes)} of ${changed} file${changed === 1 ? "" : "s"}${failed ? `; ${failed} failed` : ""}\n`,
    );
  }
  return failed ? EXIT.failed : EXIT.ok;
}

/** Files never confirmed with this server and account from which the session list is read instead of one request each. */
export const LIST_OVER = 8;

/**
 * The server's sessions by id (their current length and generation), read 100 a page, when many
 * files were never confirmed with this server and account (another account, a server started
 * afresh): one look for all of them instead of a request per file. Undefined when few were.
 */
async function listedWhenUnconfirmed(
  client: ReturnType<typeof api>,
  state: StateStore,
  files: readonly string[],
): Promise<Map<string, { offset: number; generation: number }> | undefined> {
  if (files.filter((file) => state.get(file) === undefined).length < LIST_OVER) return undefined;
  const listed = new Map<string, { offset: number; generation: number }>();
  for (const s of await cloudSessions(client)) listed.set(s.id, { offset: s.bytes, generation: s.generation });
  return listed;
}

/** Per file: bytes stored vs local size, generation, pending bytes, last error. */
export async function status(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { ...rootsOption, all: { type: "boolean" } },
    z.extend(RootArgs, { all: z.optional(z.boolean()), positionals: z.tuple([]) }),
    STATUS_HELP,
  );
  const client = api(io, { attempts: 2, maxBusyWaitMs: 5000 });
  // The token is checked (a refused one exits 3) and the server asked who it is: what counts as
  // stored is what this server's data and this account confirmed. An unreachable server leaves
  // what this machine last knew, said as such.
  let offline: string | undefined;
  let confirmed: Confirmed;
  try {
    confirmed = await confirmedState(client, io.env, { remember: false });
  } catch (error) {
    if (!(error instanceof Transient)) throw error;
    offline = error.message;
    confirmed = lastKnownState(client.login.endpoint, io.env);
  }
  const { state, identity, previous } = confirmed;
  // The cloud's sessions (read 100 a page): a file whose copy is behind the cloud's current
  // generation is another machine's; a file this server and account never confirmed is said so,
  // with what the server holds of it.
  const cloud = new Map<string, { generation: number; bytes: number }>();
  if (!offline) {
    try {
      for (const s of await cloudSessions(client)) cloud.set(s.id, { generation: s.generation, bytes: s.bytes });
    } catch (error) {
      if (!(error instanceof Transient)) throw error;
      offline = error.message; // the server went away meanwhile: the local view still stands
    }
  }
  const roots = rootsOf(args, io);
  const files = new Set([...roots.flatMap((root) => sessionFiles(root)), ...Object.keys(state.all())]);
  const rows = [...files].sort().map((file) => {
    const known = state.get(file);
    let local: number | undefined;
    try {
      local = completeLengthOf(file, statSync(file).size);
    } catch {
      local = undefined;
    }
    // A file never confirmed here: the server may still hold some of it (sent from another
    // machine, or before this machine's records): said, never counted as stored.
    const sessionId = known?.sessionId ?? (local ? sessionIdOf(file, local) : undefined);
    const inCloud = sessionId === undefined ? undefined : cloud.get(sessionId);
    // The root it came from, and what that root is (pi's, omp's, a profile's, collab replicas).
    const root = rootOf(file, roots);
    return {
      file,
      root: root ?? null,
      from: root ? rootKind(root, io.env) : null,
      session: sessionId,
      local: local ?? null,
      stored: known?.sent ?? 0,
      confirmed: known !== undefined,
      cloudBytes: offline ? null : (inCloud?.bytes ?? 0),
      generation: known?.generation ?? null,
      cloudGeneration: (known && cloud.get(known.sessionId)?.generation) ?? null,
      pending: local === undefined ? 0 : Math.max(0, local - (known?.sent ?? 0)),
      diverged: known?.diverged ?? false,
      deleted: local === undefined,
      lastError: known?.lastError ?? null,
      sync: sessionSyncStatus(known, local),
    };
  });
  const shown = args.all ? rows : rows.filter((r) => !r.deleted);
  const hidden = rows.length - shown.length;
  const server = identity ? { id: identity.server.id, user: identity.user, device: identity.device.name } : null;
  if (args.json) {
    io.out(`${safeJson({ server, lastKnown: offline !== undefined, files: shown }, 2)}\n`);
    return EXIT.ok;
  }
  if (offline) {
    io.err(
      `${sanitize(
        `could not reach ${client.login.endpoint} (${offline}): this is what this machine last knew${
          identity ? ` of server ${identity.server.id}, account ${identity.user}` : ""
        }, not what the server holds now`,
      )}\n`,
    );
  } else if (previous) io.err(`${sanitize(anotherScope(client.login.endpoint, previous))}\n`);
  for (const r of shown) {
    const flags = [
      r.deleted ? "deleted locally (the cloud copy stays)" : "",
      !r.confirmed && !r.deleted
        ? r.cloudBytes === null
          ? "not confirmed with this server"
          : r.cloudBytes > 0
            ? `not confirmed by this server and account (it holds ${formatBytes(r.cloudBytes)} of this session): pisync push checks and sends what is missing`
            : "not on this server for this account: pisync push sends it"
        : "",
      r.pending ? `${formatBytes(r.pending)} pending` : "",
      r.sync.state === "in-sync" || r.sync.state === "pending" ? "" : describeSyncStatus(r.sync),
      r.cloudGeneration !== null && r.generation !== null && r.cloudGeneration > r.generation
        ? `behind: the cloud's current copy is generation ${r.cloudGeneration}, another machine's (pisync generations ${r.session})`
        : "",
      r.lastError ? `last error: ${sanitize(r.lastError)}` : "",
    ].filter(Boolean);
    // File names, session ids and errors come from sessions and servers: each line made inert.
    io.out(
      `${sanitize(r.file)}\n  ${sanitize(
        `${r.session ?? "(no session header)"}  stored ${formatBytes(r.stored)} of ${
          r.local === null ? "?" : formatBytes(r.local)
        }  generation ${r.generation ?? "-"}${r.from ? `  from ${r.from}` : ""}${flags.length ? `  ${flags.join("; ")}` : ""}`,
      )}\n`,
    );
  }
  if (shown.length === 0) io.out("no session files\n");
  if (hidden > 0)
    io.out(`(${hidden} file${hidden === 1 ? "" : "s"} deleted here, still in the cloud: pisync status --all)\n`);
  return EXIT.ok;
}
