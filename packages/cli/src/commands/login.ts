import * as z from "zod/mini";
import { Api, ApiError, Transient } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { configPath, ENDPOINT_SHAPE, Login, saveLogin, TOKEN_SHAPE } from "../config.js";
import { deviceLogin, stdinPiped } from "../device-login.js";
import { type CommandHelp, type Io, parse } from "./common.js";

const HELP: CommandHelp = {
  usage: "pisync login --endpoint URL [--token -|TOKEN]",
  args: [],
  help: `Checks the server's address and your token against the server, then saves them in
$XDG_CONFIG_HOME/pisync/config.json (~/.config/pisync, readable by you only).
PISYNC_ENDPOINT and PISYNC_TOKEN, when set, are used instead of the saved login.
The token is best given on standard input (--token -, or piped): on the command line it
lands in your shell's history and in \`ps\`.

  --endpoint URL   the server: the API's address of a deployed stack, or http://127.0.0.1:8787
                   for \`npm start\` on this machine
  --token -        read the token (pst_…) from standard input; piped in, it is read without
                   --token too. \`npm start\` keeps the local one in <data>/local-token;
                   \`npm run token -- --user NAME\` makes more
  --token TOKEN    the token itself (discouraged: visible in history and \`ps\`)

examples:
  pisync login --endpoint http://127.0.0.1:8787 --token - < ~/.local/share/pisync/local-token
  printf %s "$PISYNC_NEW_TOKEN" | pisync login --endpoint https://abc123.execute-api.eu-west-1.amazonaws.com`,
};

/** A token read from standard input is at most this long (a token is 47 characters). */
const STDIN_MAX_BYTES = 4096;

/** Checks the endpoint and token against the server, then saves them (readable by you only). */
export async function login(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { endpoint: { type: "string" }, token: { type: "string" } },
    z.object({
      endpoint: pasted(Login.shape.endpoint, ENDPOINT_SHAPE),
      token: z.optional(
        pasted(
          z.string().check(z.refine((v) => v === "-" || Login.shape.token.safeParse(v).success, TOKEN_SHAPE)),
          TOKEN_SHAPE,
        ),
      ),
      positionals: z.tuple([]),
    }),
    HELP,
  );
  const endpoint = args.endpoint.replace(/\/+$/, "");
  // Nothing given and nothing piped in: sign this machine in from a browser (a device code).
  if (args.token === undefined && !stdinPiped()) return deviceLogin(endpoint, io);
  const candidate = { endpoint, token: await tokenOf(args.token, endpoint, io) };
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

/**
 * The token to log in with: given on the command line, read from standard input (`-`, or
 * piped in without `--token`), else obtained interactively on a terminal.
 */
async function tokenOf(given: string | undefined, endpoint: string, io: Io): Promise<string> {
  if (given !== undefined && given !== "-") return given;
  if (given === "-" || (io.stdin && !io.stdin.isTTY)) {
    const read = (await io.stdin?.read(STDIN_MAX_BYTES))?.trim() ?? "";
    if (read) {
      const token = Login.shape.token.safeParse(read);
      if (!token.success) throw new CliError(`pisync login: standard input: ${TOKEN_SHAPE}`, EXIT.usage);
      return token.data;
    }
    if (given === "-") throw new CliError("pisync login: --token -: standard input held no token", EXIT.usage);
  }
  return obtainTokenInteractively(endpoint, io);
}

/**
 * The seam for signing in from a terminal without a token at hand (a browser sign-in flow):
 * returns a new token for this machine. Without one, says how to give a token.
 */
export async function obtainTokenInteractively(_endpoint: string, _io: Io): Promise<string> {
  throw new CliError(
    `pisync login: no token given: pipe one in (printf %s "$TOKEN" | pisync login --endpoint URL) or use --token - and paste it, then press Ctrl-D\n(pisync login --help for the options and examples)`,
    EXIT.usage,
  );
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
