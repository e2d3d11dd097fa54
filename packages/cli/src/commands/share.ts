/** `share`, `shares`, `unshare`: read-only links to a conversation. */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { ShareView } from "@pisync/protocol";
import * as z from "zod/mini";
import { ApiError } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { parseDuration } from "../header.js";
import { confirmedState } from "../identity.js";
import { createLogger } from "../log.js";
import { safeJson, sanitize, sanitizeLines } from "../sanitize.js";
import { completeLengthOf, sessionIdOf, syncFile } from "../sync.js";
import { api, type CommandHelp, type Io, parse, usageError } from "./common.js";
import { resolveSessionId, resolveShareId, SHARE_LINK } from "./ids.js";

const SHARE_HELP: CommandHelp = {
  usage: "pisync share ID|FILE [--leaf ID] [--expires 7d] [--no-mask] [--json|--md]",
  args: ["ID|FILE"],
  help: `Makes a read-only link to a conversation and prints it. A session file is backed up
first. Without --leaf the link is live: it follows the session as it grows. Anyone with the
link can read the conversation until it expires or you revoke it (pisync unshare).

  --leaf ID        only the branch ending at this entry, pinned
  --expires TIME   how long the link works: 30m, 12h, 7d (default 7d; at most 90 days unless
                   the server allows more)
  --no-mask        show what looks like a credential (masked by default)
  --json           the share as JSON: { id, url, expiresAt, ... }
  --md             the conversation as Markdown, as the link shows it (masked), for an
                   agent or an issue; the link goes to stderr

examples:
  pisync share ~/.pi/agent/sessions/--home-me-app--/2026-…jsonl --expires 1d
  pisync share 0196a1b2-… --leaf a1b2c3d4
  pisync shares; pisync unshare SHARE_ID`,
};

/** The most Markdown `share --md` takes (a session's Markdown is smaller than its file). */
const MAX_MARKDOWN_BYTES = 256 * 1024 * 1024;

const EXPIRES = "a duration: minutes, hours or days (30m, 12h, 7d) or seconds, e.g. --expires 7d";

/** Whether an argument names a file rather than a session id. */
function looksLikeFile(arg: string): boolean {
  return /[/\\]/.test(arg) || arg.endsWith(".jsonl") || existsSync(arg);
}

/**
 * A server's refusal of an expiry (code `expiry_out_of_range`, with `maxSeconds`), said in
 * days: `--expires: at most 90 days on this server, e.g. --expires 7d`; undefined for any
 * other error.
 */
export function expiryLimitMessage(error: unknown): string | undefined {
  if (!(error instanceof ApiError) || error.reason !== "expiry_out_of_range") return undefined;
  const maxSeconds = error.body.maxSeconds;
  if (typeof maxSeconds !== "number") return undefined;
  const days = maxSeconds / 86400;
  return `--expires: at most ${Number.isInteger(days) ? days : days.toFixed(1)} days on this server, e.g. --expires 7d`;
}

/** Shares a session (a local file is backed up first) and prints the link. */
export async function share(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv.filter((a) => a !== "--no-mask"),
    { leaf: { type: "string" }, expires: { type: "string" }, json: { type: "boolean" }, md: { type: "boolean" } },
    z.object({
      leaf: z.optional(z.string().check(z.minLength(1, "an entry id, e.g. --leaf a1b2c3d4"))),
      expires: z.optional(
        z.pipe(
          z.string().check(z.refine((v) => (parseDuration(v) ?? 0) > 0, EXPIRES)),
          z.transform((v) => parseDuration(v) as number),
        ),
      ),
      json: z.optional(z.boolean()),
      md: z.optional(z.boolean()),
      positionals: z.tuple([
        z.string().check(z.minLength(1, "a session id (pisync ls) or a session file, e.g. ~/.pi/agent/sessions/…")),
      ]),
    }),
    SHARE_HELP,
  );
  const [target] = args.positionals;
  const file = resolve(target);
  const isFile = looksLikeFile(target);
  if (isFile && !existsSync(file)) throw new CliError(`no such file: ${file}`, EXIT.notFound);
  if (isFile && !statSync(file).isFile()) throw new CliError(`not a session file: ${file}`, EXIT.usage);
  const client = api(io);
  let sessionId = target;
  if (isFile) {
    const id = sessionIdOf(file, completeLengthOf(file, statSync(file).size));
    if (!id) throw new CliError(`${file} has no session header: it is not a pi session file`);
    const { state } = await confirmedState(client, io.env);
    try {
      await syncFile(file, { api: client, state, log: createLogger(false, () => {}) });
    } finally {
      state.flush();
    }
    sessionId = id;
  } else sessionId = await resolveSessionId(client, target); // a unique prefix stands for the id
  try {
    const result = await client.postJson<ShareView>(`/v1/sessions/${encodeURIComponent(sessionId)}/shares`, {
      leafId: args.leaf,
      expiresIn: args.expires,
      maskSecrets: !argv.includes("--no-mask"),
    });
    if (args.json) io.out(`${safeJson(result, 2)}\n`);
    else if (args.md) {
      // The link is the credential of its Markdown: no bearer token goes with it.
      const md = await client.request("GET", `${result.url}/md`, { bearer: false, maxBytes: MAX_MARKDOWN_BYTES });
      io.err(`${sanitize(`${result.url} expires ${result.expiresAt}; revoke with: pisync unshare ${result.id}`)}\n`);
      if (md.status !== 200) throw new CliError(`the link's Markdown could not be read (HTTP ${md.status})`);
      io.out(sanitizeLines(md.body.toString("utf8")));
    } else {
      io.err(`${sanitize(`expires ${result.expiresAt}; revoke with: pisync unshare ${result.id}`)}\n`);
      io.out(`${sanitize(String(result.url))}\n`);
    }
    return EXIT.ok;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new CliError(
        args.leaf
          ? `${error.message} (session ${sessionId}, leaf ${args.leaf})`
          : `no session ${sessionId} in the cloud (pisync ls lists them)`,
        EXIT.notFound,
      );
    }
    if (error instanceof ApiError && error.status === 400) {
      throw usageError(SHARE_HELP, [expiryLimitMessage(error) ?? error.message]);
    }
    throw error;
  }
}

/** My share links. */
export async function shares(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { json: { type: "boolean" } },
    z.object({ json: z.optional(z.boolean()), positionals: z.tuple([]) }),
    {
      usage: "pisync shares [--json]",
      args: [],
      help: `Your share links, of every session (also those no longer on any machine): id, status
(active, expired, revoked), session and leaf, expiry, and the link.

  --json   one JSON document: { shares: [...] }

examples:
  pisync shares
  pisync shares --json | jq -r '.shares[] | select(.status == "active") | .id'`,
    },
  );
  const { shares: list } = await api(io).json<{ shares: ShareView[] }>("/v1/shares");
  if (args.json) io.out(`${safeJson({ shares: list }, 2)}\n`);
  else
    for (const s of list)
      io.out(
        `${sanitize(
          `${s.id}  ${s.status}  ${s.sessionId}${s.leafId ? `@${s.leafId}` : ""}  expires ${s.expiresAt}  ${s.url}`,
        )}\n`,
      );
  if (!args.json && list.length === 0) io.out("no share links\n");
  return EXIT.ok;
}

/** Revokes a share link (effective on its next request). */
export async function unshare(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    {},
    z.object({
      positionals: z.tuple([
        z
          .string()
          .check(
            z.refine(
              (v) => /^[A-Za-z0-9_-]{6,22}$/.test(v) || SHARE_LINK.test(v),
              "a share id: 22 letters, digits, - or _, as `pisync shares` lists it (or its first 6 or more), or the link `pisync share` printed",
            ),
          ),
      ]),
    }),
    {
      usage: "pisync unshare SHARE_ID|LINK",
      args: ["SHARE_ID"],
      help: `Revokes a share link: its next request answers 410 (gone). Takes the share's id (as
\`pisync shares\` lists it, or a unique prefix of 6 characters or more) or the link itself.

examples:
  pisync unshare Xy3…(22 characters)
  pisync unshare Xy3AbC
  pisync unshare https://pisync.example.com/s/Xy3….k1.…`,
    },
  );
  const client = api(io);
  const id = await resolveShareId(client, args.positionals[0]);
  try {
    await client.delete(`/v1/shares/${id}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new CliError(`no share ${id} (pisync shares lists them)`, EXIT.notFound);
    }
    throw error;
  }
  io.err(`revoked ${id}\n`);
  return EXIT.ok;
}
