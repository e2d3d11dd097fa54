/** `share`, `shares`, `unshare`: read-only links to a conversation. */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import * as z from "zod/mini";
import { ApiError } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { parseDuration } from "../header.js";
import { createLogger } from "../log.js";
import { StateStore } from "../state.js";
import { completeLengthOf, sessionIdOf, syncFile } from "../sync.js";
import { api, type Io, parse } from "./common.js";

interface ShareView {
  id: string;
  sessionId: string;
  leafId: string | null;
  url: string;
  expiresAt: string;
  status: string;
}

const SHARE_USAGE = "usage: pisync share ID|FILE [--leaf ID] [--expires 7d] [--no-mask] [--json]";

/** Shares a session (a local file is backed up first) and prints the link. */
export async function share(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv.filter((a) => a !== "--no-mask"),
    { leaf: { type: "string" }, expires: { type: "string" }, json: { type: "boolean" } },
    z.object({
      leaf: z.optional(z.string().check(z.minLength(1))),
      expires: z.optional(z.string()),
      json: z.optional(z.boolean()),
      positionals: z.tuple([z.string().check(z.minLength(1))]),
    }),
    SHARE_USAGE,
  );
  const client = api(io);
  let sessionId = args.positionals[0];
  const file = resolve(sessionId);
  if (existsSync(file) && statSync(file).isFile()) {
    const id = sessionIdOf(file, completeLengthOf(file, statSync(file).size));
    if (!id) throw new CliError(`${file} has no session header`);
    const state = new StateStore(client.login.endpoint, io.env);
    await syncFile(file, { api: client, state, log: createLogger(false, () => {}) });
    state.flush();
    sessionId = id;
  }
  const expiresIn = args.expires === undefined ? undefined : parseDuration(args.expires);
  if (args.expires !== undefined && !expiresIn)
    throw new CliError(`--expires takes 7d, 12h, 30m or seconds\n${SHARE_USAGE}`, EXIT.usage);
  try {
    const result = await client.postJson<ShareView>(`/v1/sessions/${encodeURIComponent(sessionId)}/shares`, {
      leafId: args.leaf,
      expiresIn,
      maskSecrets: !argv.includes("--no-mask"),
    });
    if (args.json) io.out(`${JSON.stringify(result, null, 2)}\n`);
    else {
      io.err(`expires ${result.expiresAt}; revoke with: pisync unshare ${result.id}\n`);
      io.out(`${result.url}\n`);
    }
    return EXIT.ok;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw new CliError(error.message, EXIT.notFound);
    if (error instanceof ApiError && error.status === 400) throw new CliError(error.message, EXIT.usage);
    throw error;
  }
}

/** My share links. */
export async function shares(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { json: { type: "boolean" } },
    z.object({ json: z.optional(z.boolean()), positionals: z.tuple([]) }),
    "usage: pisync shares [--json]",
  );
  const { shares: list } = await api(io).json<{ shares: ShareView[] }>("/v1/shares");
  if (args.json) io.out(`${JSON.stringify({ shares: list }, null, 2)}\n`);
  else
    for (const s of list)
      io.out(
        `${s.id}  ${s.status}  ${s.sessionId}${s.leafId ? `@${s.leafId}` : ""}  expires ${s.expiresAt}  ${s.url}\n`,
      );
  if (!args.json && list.length === 0) io.out("no share links\n");
  return EXIT.ok;
}

/** Revokes a share link (effective on its next request). */
export async function unshare(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    {},
    z.object({ positionals: z.tuple([z.string().check(z.regex(/^[A-Za-z0-9_-]{22}$/, "a share id"))]) }),
    "usage: pisync unshare SHARE_ID",
  );
  try {
    await api(io).delete(`/v1/shares/${args.positionals[0]}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw new CliError("no such share", EXIT.notFound);
    throw error;
  }
  io.err(`revoked ${args.positionals[0]}\n`);
  return EXIT.ok;
}
