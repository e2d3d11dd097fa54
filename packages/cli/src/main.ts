/**
 * pisync: back up pi sessions as they are written, pull them onto another machine.
 * Exit codes: 0 ok, 1 failed, 2 usage, 3 not logged in or token refused, 4 not found.
 */
import { CliError, EXIT } from "./cli-error.js";
import { defaultIo, type Io } from "./commands/common.js";
import { context } from "./commands/context.js";
import { login } from "./commands/login.js";
import { ls, pull } from "./commands/remote.js";
import { share, shares, unshare } from "./commands/share.js";
import { push, status, watchCommand } from "./commands/sync-commands.js";

const HELP = `pisync: back up, move and share pi sessions

  pisync login --endpoint URL --token TOKEN   check and save the server and token
  pisync watch [--root DIR]... [--json]       back up every session as it is written
  pisync push [FILE...]                       back up everything now (resumable)
  pisync status [--json]                      per file: stored vs local, generation, errors
  pisync ls [--json]                          the sessions in the cloud
  pisync pull ID [--cwd DIR] [--out FILE]     bring a session where pi looks for it
  pisync context FILE [--leaf ID]             the context pi would send, from a local file
  pisync share ID|FILE [--leaf ID] [--expires 7d] [--no-mask]   a read-only link
  pisync shares | pisync unshare SHARE_ID     list or revoke links
  pisync pull LINK [--cwd DIR]                a shared conversation, as a new session here

Each command takes --help. Environment: PISYNC_ENDPOINT, PISYNC_TOKEN, PI_CODING_AGENT_DIR.
`;

const COMMANDS: Record<string, (argv: string[], io: Io) => Promise<number>> = {
  login,
  watch: watchCommand,
  push,
  status,
  ls,
  pull,
  context,
  share,
  shares,
  unshare,
};

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    io.out(HELP);
    return name ? EXIT.ok : EXIT.usage;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`unknown command: ${name}\n${HELP}`);
    return EXIT.usage;
  }
  try {
    return await command(rest, io);
  } catch (error) {
    if (error instanceof CliError) {
      (error.code === EXIT.ok ? io.out : io.err)(`${error.message}\n`);
      return error.code;
    }
    io.err(`pisync: ${(error as Error).message}\n`);
    return EXIT.failed;
  }
}
