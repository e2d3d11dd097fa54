import { buildSessionContext, hasEntry, type ParsedSession } from "@pisync/format";
import { readSessionFile } from "@pisync/format/file";
import * as z from "zod/mini";
import { CliError, EXIT } from "../cli-error.js";
import { safeJson, sanitize } from "../sanitize.js";
import { type CommandHelp, type Io, parse } from "./common.js";

const HELP: CommandHelp = {
  usage: "pisync context FILE [--leaf ID]",
  args: ["FILE"],
  help: `Prints, as JSON, the context pi would send the model for a local session file: the
messages, thinking level and model on the path to the leaf. Problems in the file (broken
lines, missing parents) are listed on stderr. Needs no login.

  --leaf ID   the entry to stop at (default: pi's, the file's last entry)

examples:
  pisync context ~/.pi/agent/sessions/--home-me-app--/2026-01-01T10-00-00-000Z_0196….jsonl
  pisync context session.jsonl --leaf a1b2c3d4 | jq '.messages | length'`,
};

/** Prints the context pi would send, from a local file (problems go to stderr). */
export async function context(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { leaf: { type: "string" } },
    z.object({
      leaf: z.optional(z.string().check(z.minLength(1, "an entry id, e.g. --leaf a1b2c3d4"))),
      positionals: z.tuple([z.string()]),
    }),
    HELP,
  );
  let session: ParsedSession;
  try {
    session = readSessionFile(args.positionals[0]);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    throw new CliError(
      missing
        ? `no such file: ${args.positionals[0]}`
        : `cannot read ${args.positionals[0]}: ${(error as Error).message}`,
      missing ? EXIT.notFound : EXIT.failed,
    );
  }
  if (args.leaf !== undefined && !hasEntry(session, args.leaf)) {
    throw new CliError(`no entry ${args.leaf} in ${args.positionals[0]}`, EXIT.notFound);
  }
  for (const problem of session.problems) io.err(`${sanitize(`problem: ${problem.message}`)}\n`);
  const result = buildSessionContext(session, args.leaf, {
    onProblem: (p) => io.err(`${sanitize(`problem: ${p.message}`)}\n`),
  });
  io.out(`${safeJson(result, 2)}\n`);
  return EXIT.ok;
}
