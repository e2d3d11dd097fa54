/** `watch`, `push` and `status`: backing up this machine's session files. */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import * as z from "zod/mini";
import { CliError, EXIT } from "../cli-error.js";
import { createLogger } from "../log.js";
import { defaultRoots } from "../paths.js";
import { StateStore } from "../state.js";
import { completeLengthOf, syncFile, Transient, Unauthorized } from "../sync.js";
import { sessionFiles, Watcher } from "../watch.js";
import { api, formatBytes, type Io, parse } from "./common.js";

const rootsOption = { root: { type: "string" as const, multiple: true }, json: { type: "boolean" as const } };
const RootArgs = z.object({
  root: z.optional(z.array(z.string().check(z.minLength(1)))),
  json: z.optional(z.boolean()),
  positionals: z.array(z.string()),
});

function rootsOf(args: { root?: string[] }, io: Io): string[] {
  return args.root?.length ? args.root.map((r) => resolve(r)) : defaultRoots(io.env);
}

/** Follows every session file under the roots until stopped (SIGINT/SIGTERM). */
export async function watchCommand(argv: string[], io: Io, signal?: AbortSignal): Promise<number> {
  const args = parse(argv, rootsOption, RootArgs, "usage: pisync watch [--root DIR]... [--json]");
  const roots = rootsOf(args, io);
  const log = createLogger(args.json ?? false, io.err);
  const client = api(io);
  const state = new StateStore(client.login.endpoint, io.env);
  const watcher = new Watcher({ api: client, state, log }, { roots });
  log.event("watching", { roots: roots.join(","), files: roots.reduce((n, r) => n + sessionFiles(r).length, 0) });
  watcher.start();
  const stop = () => watcher.stop();
  signal?.addEventListener("abort", stop);
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  await watcher.done;
  // The server refused the token: the watcher stopped; scripts and service managers see 3.
  if (watcher.refused) throw new CliError(watcher.refused, EXIT.auth);
  return EXIT.ok;
}

/** One-shot backup of every session file (or the given ones), with progress; resumable. */
export async function push(argv: string[], io: Io): Promise<number> {
  const args = parse(argv, rootsOption, RootArgs, "usage: pisync push [FILE...] [--root DIR]... [--json]");
  const files = args.positionals.length
    ? args.positionals.map((f) => resolve(f))
    : rootsOf(args, io).flatMap((root) => sessionFiles(root));
  for (const file of files) if (!existsSync(file)) throw new CliError(`no such file: ${file}`, EXIT.notFound);
  const client = api(io);
  const state = new StateStore(client.login.endpoint, io.env);
  const log = createLogger(args.json ?? false, args.json ? io.err : () => {});
  const total = files.reduce((sum, file) => {
    try {
      return sum + Math.max(0, completeLengthOf(file, statSync(file).size) - (state.get(file)?.sent ?? 0));
    } catch {
      return sum;
    }
  }, 0);
  let sent = 0;
  let failed = 0;
  const progress = (done: number) => {
    const line = `files ${done}/${files.length}, ${formatBytes(sent)} of ${formatBytes(total)} sent`;
    if (args.json) return;
    if (io.isTTY) io.err(`\r${line}   `);
    else io.err(`${line}\n`);
  };
  for (let i = 0; i < files.length; i++) {
    try {
      const result = await syncFile(files[i], {
        api: client,
        state,
        log,
        onProgress: (bytes) => {
          sent += bytes;
        },
      });
      if (result.status === "skipped") io.err(`${io.isTTY ? "\n" : ""}skipped ${files[i]}: ${result.reason}\n`);
    } catch (error) {
      if (error instanceof Unauthorized)
        throw new CliError(`the server refused the token: run pisync login`, EXIT.auth);
      if (!(error instanceof Transient)) throw error;
      failed++;
      state.update(files[i], { lastError: error.message });
      io.err(`${io.isTTY ? "\n" : ""}failed ${files[i]}: ${error.message} (run push again to resume)\n`);
    }
    progress(i + 1);
  }
  state.flush();
  if (io.isTTY && !args.json) io.err("\n");
  if (args.json) io.out(`${JSON.stringify({ files: files.length, bytes: sent, failed })}\n`);
  return failed ? EXIT.failed : EXIT.ok;
}

/** Per file: bytes stored vs local size, generation, pending bytes, last error. */
export async function status(argv: string[], io: Io): Promise<number> {
  const args = parse(argv, rootsOption, RootArgs, "usage: pisync status [--root DIR]... [--json]");
  const state = new StateStore(api(io).login.endpoint, io.env);
  const files = new Set([...rootsOf(args, io).flatMap((root) => sessionFiles(root)), ...Object.keys(state.all())]);
  const rows = [...files].sort().map((file) => {
    const known = state.get(file);
    let local: number | undefined;
    try {
      local = completeLengthOf(file, statSync(file).size);
    } catch {
      local = undefined;
    }
    return {
      file,
      session: known?.sessionId,
      local: local ?? null,
      stored: known?.sent ?? 0,
      generation: known?.generation ?? null,
      pending: local === undefined ? 0 : Math.max(0, local - (known?.sent ?? 0)),
      diverged: known?.diverged ?? false,
      deleted: local === undefined,
      lastError: known?.lastError ?? null,
    };
  });
  if (args.json) {
    io.out(`${JSON.stringify({ files: rows }, null, 2)}\n`);
    return EXIT.ok;
  }
  for (const r of rows) {
    const flags = [
      r.deleted ? "deleted locally (the cloud copy stays)" : "",
      r.pending ? `${formatBytes(r.pending)} pending` : "",
      r.diverged ? "diverged: another machine writes this session too" : "",
      r.lastError ? `last error: ${r.lastError}` : "",
    ].filter(Boolean);
    io.out(
      `${r.file}\n  ${r.session ?? "(not sent yet)"}  stored ${formatBytes(r.stored)} of ${
        r.local === null ? "?" : formatBytes(r.local)
      }  generation ${r.generation ?? "-"}${flags.length ? `  ${flags.join("; ")}` : ""}\n`,
    );
  }
  if (rows.length === 0) io.out("no session files\n");
  return EXIT.ok;
}
