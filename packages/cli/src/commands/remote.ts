/** `ls` and `pull`: the sessions in the cloud, and bringing one onto this machine. */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import * as z from "zod/mini";
import { ApiError } from "../api.js";
import { blobsDirFor, fetchBlobs } from "../blobs.js";
import { CliError, EXIT } from "../cli-error.js";
import { writeAtomic } from "../files.js";
import { headerOf } from "../header.js";
import { httpRequest } from "../http.js";
import { isInside, piFileName, piFolderName, piSessionsRoot } from "../paths.js";
import { fingerprintOf, StateStore } from "../state.js";
import { api, formatBytes, type Io, parse } from "./common.js";

interface SessionView {
  id: string;
  name?: string;
  cwd?: string;
  firstMessage?: string;
  updatedAt: string;
  entries: number;
  bytes: number;
  tokens: number;
  cost: number;
  generation: number;
}

/** The sessions in the cloud, newest first. */
export async function ls(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { json: { type: "boolean" } },
    z.object({ json: z.optional(z.boolean()), positionals: z.tuple([]) }),
    "usage: pisync ls [--json]",
  );
  const client = api(io);
  const sessions: SessionView[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.json<{ sessions: SessionView[]; cursor?: string }>(
      `/v1/sessions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    sessions.push(...page.sessions);
    cursor = page.cursor;
  } while (cursor);
  if (args.json) {
    io.out(`${JSON.stringify({ sessions }, null, 2)}\n`);
    return EXIT.ok;
  }
  for (const s of sessions) {
    const title = s.name ?? s.firstMessage ?? "";
    io.out(
      `${s.id}  ${s.updatedAt}  ${s.entries} entries  ${formatBytes(s.bytes)}  $${s.cost.toFixed(2)}  ${s.cwd ?? ""}  ${title}\n`,
    );
  }
  if (sessions.length === 0) io.out("no sessions in the cloud\n");
  return EXIT.ok;
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const USAGE = "usage: pisync pull ID|LINK [--cwd DIR] [--out FILE] [--root DIR]";

/**
 * A shared conversation, imported as a new session of this machine: a new id, and the link in
 * its header's `parentSession` (as pi records a fork's origin). Needs no login.
 */
async function pullLink(link: string, args: { cwd?: string; out?: string; root?: string }, io: Io): Promise<number> {
  const url = new URL(link);
  let response: Awaited<ReturnType<typeof httpRequest>>;
  try {
    response = await httpRequest("GET", `${url.origin}${url.pathname}/raw`, { "Accept-Encoding": "identity" });
  } catch (error) {
    throw new CliError(`could not reach ${url.origin}: ${(error as Error).message}`);
  }
  if (response.status === 404) throw new CliError("no such link", EXIT.notFound);
  if (response.status === 410) throw new CliError("this link has expired or was revoked", EXIT.notFound);
  if (response.status !== 200) throw new CliError(`the link answered HTTP ${response.status}`);
  const found = headerOf(response.body);
  if (!found) throw new CliError("the shared file has no session header");
  const header: Record<string, unknown> = found.header;
  const id = randomUUID();
  const timestamp = new Date().toISOString();
  const cwd = args.cwd ? resolve(args.cwd) : typeof header.cwd === "string" ? header.cwd : "/";
  const imported = { ...header, id, timestamp, cwd, parentSession: `${url.origin}${url.pathname}` };
  const body = `${JSON.stringify(imported)}\n${response.body.subarray(found.end).toString("utf8")}`;
  const root = resolve(args.root ?? piSessionsRoot(io.env));
  const target = args.out ? resolve(args.out) : join(root, piFolderName(cwd), piFileName(timestamp, id));
  if (!args.out && !isInside(root, target)) throw new CliError(`refusing to write outside ${root}: ${target}`);
  if (existsSync(target)) throw new CliError(`a file is already at ${target}; not overwritten`);
  writeAtomic(target, body.endsWith("\n") ? body : `${body}\n`, 0o644);
  io.err(`imported the shared conversation as session ${id} (forked from ${url.origin}${url.pathname})\n`);
  io.out(`${target}\n`);
  return EXIT.ok;
}

/**
 * Writes the session's exact bytes where pi looks for it: `<root>/--<cwd>--/<timestamp>_<id>.jsonl`,
 * so that `pi --resume` in that folder lists it. Never overwrites a different file, never
 * writes outside the sessions root. Afterwards `watch` continues from where the cloud ends.
 */
export async function pull(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { cwd: { type: "string" }, out: { type: "string" }, root: { type: "string" } },
    z.object({
      cwd: z.optional(z.string().check(z.minLength(1))),
      out: z.optional(z.string().check(z.minLength(1))),
      root: z.optional(z.string().check(z.minLength(1))),
      positionals: z.tuple([
        z
          .string()
          .check(
            z.refine(
              (v) => SESSION_ID.test(v) || /^https?:\/\/[^\s]+\/s\/[A-Za-z0-9._-]+$/.test(v),
              "a session id or a share link",
            ),
          ),
      ]),
    }),
    USAGE,
  );
  const [id] = args.positionals;
  if (!SESSION_ID.test(id)) return pullLink(id, args, io);
  const client = api(io);
  let meta: { generation: number };
  let bytes: Uint8Array;
  try {
    meta = await client.json<{ generation: number }>(`/v1/sessions/${id}`);
    bytes = await client.raw(id);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404)
      throw new CliError(`no session ${id} in the cloud`, EXIT.notFound);
    throw error;
  }
  const header = headerOf(bytes)?.header;
  if (!header || header.id !== id) throw new CliError(`the cloud copy of ${id} has no header naming it`);
  const root = resolve(args.root ?? piSessionsRoot(io.env));
  const originalCwd = typeof header.cwd === "string" ? header.cwd : "/";
  const cwd = args.cwd ? resolve(args.cwd) : originalCwd;
  const timestamp = typeof header.timestamp === "string" ? header.timestamp : new Date(0).toISOString();
  const target = args.out ? resolve(args.out) : join(root, piFolderName(cwd), piFileName(timestamp, id));
  if (!args.out && !isInside(root, target)) throw new CliError(`refusing to write outside ${root}: ${target}`);
  if (existsSync(target)) {
    const existing = readFileSync(target);
    if (!Buffer.from(bytes).equals(existing)) {
      throw new CliError(`a different file is already at ${target}; not overwritten (use --out to write elsewhere)`);
    }
    io.err(`already there: ${target}\n`);
  } else {
    writeAtomic(target, bytes, 0o644);
    io.err(`pulled ${id} (${formatBytes(bytes.length)}, generation ${meta.generation}) into ${target}\n`);
  }
  const blobs = await fetchBlobs(client, target, bytes);
  if (blobs) io.err(`fetched ${blobs} image blob${blobs === 1 ? "" : "s"} into ${blobsDirFor(target)}\n`);
  if (cwd !== originalCwd) {
    io.err(
      `cwd remapped: ${originalCwd} → ${cwd} (the file is in ${piFolderName(cwd)}; its header still says ${originalCwd})\n`,
    );
  }
  // `watch` continues from where the cloud copy ends.
  const complete = bytes.lastIndexOf(0x0a) + 1;
  const state = new StateStore(client.login.endpoint, io.env);
  state.set(target, {
    sessionId: id,
    generation: meta.generation,
    sent: complete,
    fingerprint: fingerprintOf(bytes, complete),
    local: complete,
    updatedAt: new Date().toISOString(),
  });
  state.flush();
  io.out(`${target}\n`);
  return EXIT.ok;
}
