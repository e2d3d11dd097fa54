/**
 * pisync: back up pi sessions as they are written, pull them onto another machine.
 * Exit codes: 0 ok, 1 failed, 2 usage, 3 not logged in or token refused, 4 not found.
 */
import packageJson from "../package.json" with { type: "json" };
import { ApiError, Transient } from "./api.js";
import { CliError, EXIT } from "./cli-error.js";
import { defaultIo, type Io, refusedToken } from "./commands/common.js";
import { mcp } from "./commands/mcp-load.js";
import { push, status, watchCommand } from "./commands/sync-commands.js";
import { requestTimeoutMs, resolveLogin } from "./config.js";
import { safeJson, sanitizeLines } from "./sanitize.js";
import { closest } from "./suggest.js";
import { Unauthorized } from "./sync.js";

/** The version of this build (from the package, baked into the bundle). */
export const VERSION: string = packageJson.version;

const HELP = `pisync ${VERSION}: back up, move and share pi sessions

  pisync login --endpoint URL [--token -]    check and save the server and token (read from
                                              stdin; without one: sign in from a browser)
  pisync whoami [--json]                      account, endpoint, device name and server id
  pisync logout [--revoke]                    forget the saved login (and revoke its token)
  pisync device rename NAME                   what this machine is called (status, /devices)
  pisync watch [--root DIR]... [--json]       back up every session as it is written
  pisync push [FILE...]                       back up everything now (resumable)
  pisync status [--all] [--json]              per file: stored vs local, generation, errors
  pisync ls [--cwd DIR] [--since 30d] [--limit N] [--json]   the sessions in the cloud
  pisync search QUERY [--json] [--limit N]    find sessions by what was said in them
  pisync insights [--since 30d] [--by model|project|machine|tool|day|week] [--json]
                                              where tokens, money and model time went
  pisync open [ID|QUERY] [--print]            the library in your browser, signed in
  pisync pull ID [--cwd DIR] [--out FILE]     bring a session where pi looks for it
  pisync pull --all [--map OLD=NEW]...        every session of the account (a new machine)
  pisync generations ID                       the stored generations of a session
  pisync rm ID... [--yes]                     delete sessions from the cloud for good, with a receipt
  pisync pull ID --generation N               an older generation, as a new session here
  pisync context FILE [--leaf ID]             the context pi would send, from a local file
  pisync share ID|FILE [--leaf ID] [--expires 7d] [--no-mask]   a read-only link
  pisync shares | pisync unshare SHARE_ID|LINK   list or revoke links
  pisync pull LINK [--cwd DIR]                a shared conversation, as a new session here
  pisync service install|uninstall|status     run the watcher at login, restarted on failure
  pisync mcp                                  an MCP server over stdio: agents read your sessions
  pisync team create|invite|join|ls|add|remove|policy|audit|share-folder   the team library

Every command takes --help (options and examples); pisync --version prints the version.
An ID may be a unique prefix of 6 characters or more.
Every command takes --timeout SECONDS: the longest one request may take (default 120,
more for large downloads); a busy server (429, 503, 507) is waited out as it asks.
Environment: PISYNC_ENDPOINT, PISYNC_TOKEN, PISYNC_TIMEOUT, PI_CODING_AGENT_DIR, BROWSER.
Exit codes: 0 ok, 1 failed, 2 usage, 3 not logged in or token refused, 4 not found.
`;

/** A command: its arguments (after its name) and the terminal; resolves to the exit code. */
type Command = (argv: string[], io: Io) => Promise<number>;

/**
 * A command whose module is imported when it runs: the bundle splits it into a file of its own,
 * so what every start reads (and `pisync watch` holds all day) is the backup engine and no more.
 */
function lazy<K extends string>(load: () => Promise<Record<K, Command>>, name: K): Command {
  return async (argv, io) => (await load())[name](argv, io);
}

const account = () => import("./commands/account.js");
const remote = () => import("./commands/remote.js");
const sharing = () => import("./commands/share.js");

const COMMANDS: Record<string, Command> = {
  login: lazy(() => import("./commands/login.js"), "login"),
  logout: lazy(account, "logout"),
  whoami: lazy(account, "whoami"),
  watch: watchCommand,
  push,
  status,
  ls: lazy(remote, "ls"),
  search: lazy(() => import("./commands/search.js"), "search"),
  insights: lazy(() => import("./commands/insights.js"), "insights"),
  open: lazy(() => import("./commands/open.js"), "open"),
  pull: lazy(() => import("./commands/pull.js"), "pull"),
  generations: lazy(() => import("./commands/generations.js"), "generations"),
  rm: lazy(() => import("./commands/rm.js"), "rm"),
  context: lazy(() => import("./commands/context.js"), "context"),
  share: lazy(sharing, "share"),
  shares: lazy(sharing, "shares"),
  unshare: lazy(sharing, "unshare"),
  service: lazy(() => import("./commands/service.js"), "service"),
  // A bundle of its own (the MCP SDK and its zod), not a chunk: see commands/mcp-load.ts.
  mcp,
  device: lazy(() => import("./commands/device.js"), "device"),
  team: lazy(() => import("./commands/team.js"), "team"),
};

/** The endpoint in effect, for messages (the command already checked there is one). */
function endpointOf(io: Io): string {
  const resolved = resolveLogin(io.env);
  return "login" in resolved ? resolved.login.endpoint : "the server";
}

/** What ended a command, as its message and exit code. */
function outcome(error: unknown, io: Io): CliError {
  // API errors are CliErrors too (with their exit code): a refusal still gets the full sentence.
  if (error instanceof Unauthorized || (error instanceof ApiError && error.status === 401)) {
    return refusedToken(endpointOf(io));
  }
  if (error instanceof ApiError && error.status === 404) return new CliError(error.message, EXIT.notFound);
  if (error instanceof CliError) return error;
  if (error instanceof Transient) {
    return new CliError(`could not reach ${endpointOf(io)}: ${error.message} (try again later)`);
  }
  return new CliError(`pisync: ${(error as Error).message}`);
}

/**
 * `--timeout SECONDS` (or `--timeout=SECONDS`), anywhere after the command: taken out of the
 * arguments and set as PISYNC_TIMEOUT for this command (every command talks to the server the
 * same way).
 */
function takeTimeout(argv: string[], io: Io): { argv: string[]; io: Io } {
  const at = argv.findIndex((a) => a === "--timeout" || a.startsWith("--timeout="));
  if (at < 0) return { argv, io };
  const inline = argv[at].startsWith("--timeout=");
  const value = inline ? argv[at].slice("--timeout=".length) : (argv[at + 1] ?? "");
  const rest = argv.filter((_, i) => i !== at && (inline || i !== at + 1));
  const env = { ...io.env, PISYNC_TIMEOUT: value };
  requestTimeoutMs(env); // a malformed value is a usage error before anything runs
  return { argv: rest, io: { ...io, env } };
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const [name, ...options] = argv;
  if (name === "--version" || name === "-v" || name === "version") {
    io.out(`${VERSION}\n`);
    return EXIT.ok;
  }
  if (name === "help" && options[0] && COMMANDS[options[0]]) return main([options[0], "--help"], io);
  if (!name || name === "--help" || name === "-h" || name === "help") {
    (name ? io.out : io.err)(HELP);
    return name ? EXIT.ok : EXIT.usage;
  }
  const command = COMMANDS[name];
  if (!command) {
    // A typo gets the command it likely meant, not the whole help.
    const meant = closest(name, Object.keys(COMMANDS));
    io.err(
      meant
        ? `pisync: unknown command ${safeJson(name)}: did you mean \`pisync ${meant}\`? (pisync --help lists the commands)\n`
        : `pisync: unknown command ${safeJson(name)}\n\n${HELP}`,
    );
    return EXIT.usage;
  }
  try {
    const { argv: rest, io: withTimeout } = takeTimeout(options, io);
    return await command(rest, withTimeout);
  } catch (error) {
    const ended = outcome(error, io);
    // A message may carry the server's words (an error's text) or a session's: made inert.
    (ended.code === EXIT.ok ? io.out : io.err)(`${sanitizeLines(ended.message)}\n`);
    return ended.code;
  }
}
