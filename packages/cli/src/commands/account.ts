/** `whoami` and `logout`: who this machine is on the server, and forgetting (or revoking) its login. */
import { readFileSync, rmSync } from "node:fs";
import * as z from "zod/mini";
import { Api, ApiError } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { configPath, Login, requestTimeoutMs, tidyLogin } from "../config.js";
import { whoami as askWhoami } from "../identity.js";
import { safeJson, sanitize } from "../sanitize.js";
import { api, type CommandHelp, type Io, parse } from "./common.js";

const WHOAMI_HELP: CommandHelp = {
  usage: "pisync whoami [--json]",
  args: [],
  help: `Who this machine is on the server: the account, the endpoint, this machine's device
name (its token's) and the server's id (the id of the data it keeps: a server started afresh
at the same address has another, and nothing backed up before counts there). A refused token
exits 3.

  --json   { user, endpoint, device: { id, name }, server: { id } }

examples:
  pisync whoami
  pisync whoami --json | jq -r .server.id`,
};

/** Prints the account, endpoint, device and server id the login in effect reaches. */
export async function whoami(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { json: { type: "boolean" } },
    z.object({ json: z.optional(z.boolean()), positionals: z.tuple([]) }),
    WHOAMI_HELP,
  );
  const client = api(io, { attempts: 2 });
  const identity = await askWhoami(client);
  if (!identity) throw new CliError(`the server at ${client.login.endpoint} is too old to say who you are there`);
  if (args.json) {
    io.out(`${safeJson({ ...identity, endpoint: client.login.endpoint })}\n`);
    return EXIT.ok;
  }
  // The names come from the server: made inert.
  io.out(
    `${sanitize(`account   ${identity.user}`)}\n${sanitize(`endpoint  ${client.login.endpoint}`)}\n${sanitize(
      `device    ${identity.device.name || "(unnamed)"} (token ${identity.device.id})`,
    )}\n${sanitize(`server    ${identity.server.id}`)}\n`,
  );
  return EXIT.ok;
}

const LOGOUT_HELP: CommandHelp = {
  usage: "pisync logout [--revoke]",
  args: [],
  help: `Removes the saved login (the endpoint and the token) from this machine's disk. The
server still accepts the token until it is revoked: --revoke revokes it there first (as
/devices does). PISYNC_ENDPOINT and PISYNC_TOKEN, when set, still log in: unset them too.

  --revoke   revoke the token on the server too (a refused or unknown token is gone already)

examples:
  pisync logout
  pisync logout --revoke`,
};

/** Forgets the saved login; with `--revoke`, revokes its token on the server first. */
export async function logout(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { revoke: { type: "boolean" } },
    z.object({ revoke: z.optional(z.boolean()), positionals: z.tuple([]) }),
    LOGOUT_HELP,
  );
  const path = configPath(io.env);
  let saved: Login | undefined;
  try {
    const parsed = Login.safeParse(tidyLogin(JSON.parse(readFileSync(path, "utf8"))));
    saved = parsed.success ? parsed.data : undefined;
  } catch {}
  if (args.revoke) {
    if (!saved) throw new CliError(`no saved login to revoke (${path})`, EXIT.auth);
    const client = new Api(saved, { attempts: 2, timeoutMs: requestTimeoutMs(io.env) });
    try {
      const identity = await askWhoami(client);
      if (!identity)
        throw new CliError(
          `the server at ${saved.endpoint} cannot revoke a token from here; revoke it on its /devices page`,
        );
      await client.delete(`/v1/tokens/${encodeURIComponent(identity.device.id)}`);
      io.err(
        `${sanitize(`revoked the token of ${identity.device.name || identity.device.id} on ${saved.endpoint}`)}\n`,
      );
    } catch (error) {
      // Refused: the server no longer knows the token; it is revoked already, or never was its.
      if (!(error instanceof ApiError && error.status === 401)) throw error;
      io.err(`${sanitize(`the server at ${saved.endpoint} no longer accepts the token: nothing to revoke`)}\n`);
    }
  }
  rmSync(path, { force: true });
  io.err(`${sanitize(saved ? `logged out of ${saved.endpoint}: removed ${path}` : `no saved login (${path})`)}\n`);
  if (io.env.PISYNC_TOKEN || io.env.PISYNC_ENDPOINT) {
    io.err("PISYNC_ENDPOINT or PISYNC_TOKEN is set in this shell: it still logs in until you unset it\n");
  }
  return EXIT.ok;
}
