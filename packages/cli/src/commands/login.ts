import * as z from "zod/mini";
import { Api, ApiError, Transient } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { configPath, ENDPOINT_SHAPE, Login, saveLogin, TOKEN_SHAPE } from "../config.js";
import { deviceLogin, stdinPiped } from "../device-login.js";
import { type CommandHelp, type Io, parse } from "./common.js";

const HELP: CommandHelp = {
  usage: "pisync login --endpoint URL [--token TOKEN]",
  args: [],
  help: `Checks the server's address and your token against the server, then saves them in
$XDG_CONFIG_HOME/pisync/config.json (~/.config/pisync, readable by you only).
PISYNC_ENDPOINT and PISYNC_TOKEN, when set, are used instead of the saved login.

  --endpoint URL   the server: the API's address of a deployed stack, or http://127.0.0.1:8787
                   for \`npm start\` on this machine
  --token TOKEN    a token (pst_…): \`npm start\` keeps the local one in <data>/local-token;
                   \`npm run token -- --user NAME\` makes more

examples:
  pisync login --endpoint http://127.0.0.1:8787 --token "$(cat ~/.local/share/pisync/local-token)"
  pisync login --endpoint https://abc123.execute-api.eu-west-1.amazonaws.com --token pst_…`,
};

/** Checks the endpoint and token against the server, then saves them (readable by you only). */
export async function login(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { endpoint: { type: "string" }, token: { type: "string" } },
    z.object({
      endpoint: pasted(Login.shape.endpoint, ENDPOINT_SHAPE),
      token: z.optional(pasted(Login.shape.token, TOKEN_SHAPE)),
      positionals: z.tuple([]),
    }),
    HELP,
  );
  const endpoint = args.endpoint.replace(/\/+$/, "");
  if (args.token === undefined) {
    if (!stdinPiped()) return deviceLogin(endpoint, io);
    throw new CliError("--token is required when something is piped in", EXIT.usage);
  }
  const candidate = { endpoint, token: args.token };
  try {
    await new Api(candidate, { attempts: 2 }).json("/v1/sessions?limit=1");
  } catch (error) {
    if (error instanceof ApiError && error.status === 401)
      throw new CliError(
        `the server at ${candidate.endpoint} refused this token (mistyped, revoked or for another server)`,
        EXIT.auth,
      );
    if (error instanceof ApiError || error instanceof Transient) {
      throw new CliError(`could not reach pisync at ${candidate.endpoint}: ${error.message}`);
    }
    throw error;
  }
  saveLogin(candidate, io.env);
  io.err(`logged in to ${candidate.endpoint}; saved in ${configPath(io.env)}\n`);
  return EXIT.ok;
}

/** A value as a person pastes it: surrounding spaces dropped before `schema` checks it. */
function pasted(schema: z.ZodMiniType<string, string>, error: string): z.ZodMiniType<string, unknown> {
  return z.pipe(
    z.pipe(
      z.string({ error }),
      z.transform((v: string) => v.trim()),
    ),
    schema,
  );
}
