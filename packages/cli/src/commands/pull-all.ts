/**
 * `pisync pull --all`: a new machine restored in one command. Every session of the account (or
 * those the filters keep) is brought where pi looks for it, byte for byte, through the same
 * path as `pull ID`. Each file is written aside and renamed into place, so a kill leaves each
 * file whole or absent; what was brought is recorded as confirmed (as `pull` records it), so a
 * second run finds nothing to do and `watch` continues every file from where the cloud ends.
 */
import { readdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { SessionMeta, SessionSummary } from "@pisync/protocol";
import * as z from "zod/mini";
import { Transient } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { confirmedState } from "../identity.js";
import { safeJson, sanitize } from "../sanitize.js";
import type { StateStore } from "../state.js";
import { cloudSessions } from "./cloud-sessions.js";
import { api, type CommandHelp, type Io, parse } from "./common.js";
import { type Progress, ProgressBar } from "./progress.js";
import { pullCurrent } from "./remote.js";
import { CwdPrefix, FolderMap, filterSessions, mapFolder, Since } from "./session-filters.js";

export const PULL_ALL_HELP: CommandHelp = {
  usage: "pisync pull --all [--machine NAME] [--cwd PREFIX] [--since 30d] [--map OLD=NEW]... [--root DIR] [--json]",
  args: [],
  help: `Brings every session of your account where pi looks for it (a new machine restored in
one command), byte for byte, with progress and a summary. Interrupted or killed, run it again:
it resumes (each file is written aside and renamed into place: never a partial or a duplicate
file); a second run has nothing to do. Sessions already here are left as they are; a file here
that differs from the cloud copy (continued on this machine) is left too, and said. \`watch\`
then continues every file from where the cloud copy ends.

  --machine NAME   only sessions a device of that name wrote to (as /devices names it)
  --cwd PREFIX     only sessions of that folder or below it (their original folder)
  --since TIME     only sessions whose conversation moved within TIME: 30d, 12h, 90m
  --map OLD=NEW    file sessions of OLD (or below) under NEW instead, e.g. a new home path
                   (repeatable; the longest OLD that applies wins; the header keeps its cwd,
                   as pull --cwd does)
  --root DIR       the sessions root (default: pi's, ~/.pi/agent/sessions)
  --json           { pulled, already, differ, failed, bytes } on stdout

examples:
  pisync pull --all
  pisync pull --all --map /home/old=/home/new --since 90d
  pisync pull --all --machine laptop --cwd /home/me/src`,
};

const PullAllArgs = z.object({
  all: z.literal(true),
  machine: z.optional(z.string().check(z.minLength(1, "a device name, e.g. --machine laptop"))),
  cwd: z.optional(CwdPrefix),
  since: z.optional(Since),
  map: z.optional(z.array(FolderMap)),
  root: z.optional(z.string().check(z.minLength(1, "a folder, e.g. --root ~/.pi/agent/sessions"))),
  json: z.optional(z.boolean()),
  positionals: z.tuple([]),
});

/** The record is written every this many sessions (and at the end, and on Ctrl-C). */
const FLUSH_EVERY = 10;

/** Whether a session is here already as the cloud holds it (recorded by an earlier pull or backup, its file intact). */
function alreadyHere(state: StateStore, s: SessionSummary): boolean {
  for (const [path, known] of Object.entries(state.all())) {
    if (known.sessionId !== s.id || known.generation !== s.generation || known.sent !== s.bytes) continue;
    try {
      if (statSync(path).size >= known.sent) return true;
    } catch {}
  }
  return false;
}

/** Temporary files a killed write left beside a session file (`<name>.<8 hex>.tmp`). */
function removeLeftovers(path: string): void {
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  const stem = basename(path);
  for (const name of names) {
    if (name.startsWith(`${stem}.`) && /^\.[0-9a-f]{8}\.tmp$/.test(name.slice(stem.length))) {
      rmSync(join(dirname(path), name), { force: true });
    }
  }
}

/** `pisync pull --all`: every session of the account (or the filters'), resumable and idempotent. */
export async function pullAll(argv: string[], io: Io, signal?: AbortSignal): Promise<number> {
  const args = parse(
    argv,
    {
      all: { type: "boolean" },
      machine: { type: "string" },
      cwd: { type: "string" },
      since: { type: "string" },
      map: { type: "string", multiple: true },
      root: { type: "string" },
      json: { type: "boolean" },
    },
    PullAllArgs,
    PULL_ALL_HELP,
  );
  const bar = new ProgressBar(args.json ? { ...io, isTTY: false } : io);
  const say = (line: string) => {
    if (!args.json) bar.say(sanitize(line));
  };
  const client = api(io, { onWait: (wait) => say(`server busy: waiting ${Math.ceil(wait.ms / 1000)} s`) });
  const { state } = await confirmedState(client, io.env);
  let chosen = filterSessions(await cloudSessions(client), { cwd: args.cwd, since: args.since });
  // Oldest first: an interrupted run has brought the oldest, the next run the rest.
  chosen = chosen.reverse();
  const progress: Progress = {
    bytes: 0,
    totalBytes: chosen.reduce((n, s) => n + s.bytes, 0),
    files: 0,
    totalFiles: chosen.length,
  };
  const counts = { pulled: 0, already: 0, differ: 0, failed: 0, other: 0 };
  // Ctrl-C: the file being written is finished (or never appears), the record kept; then stop.
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  process.on("SIGINT", stop);
  signal?.addEventListener("abort", stop);
  try {
    for (const s of chosen) {
      if (stopped) break;
      if (alreadyHere(state, s)) {
        counts.already++;
      } else {
        try {
          if (args.machine !== undefined) {
            const meta = await client.json<SessionMeta>(`/v1/sessions/${encodeURIComponent(s.id)}`);
            if (!(meta.writers ?? []).some((w) => w.device === args.machine)) {
              counts.other++;
              progress.totalBytes -= s.bytes;
              progress.totalFiles--;
              continue;
            }
          }
          const cwd = s.cwd === undefined ? undefined : mapFolder(s.cwd, args.map ?? []);
          const quiet: Io = { ...io, err: () => {} };
          const pulled = await pullCurrent(s.id, { cwd, root: args.root, positionals: [s.id] }, quiet, {
            client,
            state,
          });
          removeLeftovers(pulled.path);
          if (pulled.already) counts.already++;
          else {
            counts.pulled++;
            if (!io.isTTY) say(`pulled ${s.id} into ${pulled.path}`);
          }
        } catch (error) {
          if (error instanceof CliError && /a different file is already at/.test(error.message)) {
            counts.differ++;
            say(`left as it is: ${error.message.replace(/ \(use --out.*$/, "")}`);
          } else if (error instanceof Transient || (error instanceof CliError && error.code !== EXIT.auth)) {
            counts.failed++;
            say(`failed ${s.id}: ${error.message}`);
          } else throw error;
        }
      }
      progress.bytes += s.bytes;
      progress.files++;
      bar.update(progress);
      if (progress.files % FLUSH_EVERY === 0) state.flush();
    }
  } finally {
    process.removeListener("SIGINT", stop);
    state.flush();
  }
  bar.finish(progress, counts.pulled > 0);
  const summary = { ...counts, bytes: progress.bytes, total: chosen.length - counts.other };
  if (args.json) io.out(`${safeJson(summary)}\n`);
  if (stopped) {
    io.err(
      `interrupted after ${progress.files} of ${progress.totalFiles} sessions: run pisync pull --all again to resume\n`,
    );
    return 130;
  }
  if (!args.json) {
    const parts = [
      `pulled ${counts.pulled} session${counts.pulled === 1 ? "" : "s"}`,
      `${counts.already} already here`,
      ...(counts.differ ? [`${counts.differ} left as they are (they differ from the cloud copy)`] : []),
      ...(counts.failed ? [`${counts.failed} failed (run it again to retry them)`] : []),
    ];
    io.err(
      counts.pulled === 0 && counts.differ === 0 && counts.failed === 0
        ? `nothing to do: ${counts.already === 0 ? "no sessions match" : `all ${counts.already} sessions are here`}\n`
        : `${parts.join("; ")}\n`,
    );
  }
  return counts.failed ? EXIT.failed : EXIT.ok;
}
