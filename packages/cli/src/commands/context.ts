import { readFileSync } from "node:fs";
import { buildSessionContext, parseSession } from "@pisync/format";
import * as z from "zod/mini";
import { CliError, EXIT } from "../cli-error.js";
import { type Io, parse } from "./common.js";

const USAGE = "usage: pisync context FILE [--leaf ID]";

/** Prints the context pi would send, from a local file (problems go to stderr). */
export async function context(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { leaf: { type: "string" } },
    z.object({ leaf: z.optional(z.string().check(z.minLength(1))), positionals: z.tuple([z.string()]) }),
    USAGE,
  );
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(args.positionals[0]);
  } catch (error) {
    throw new CliError(`cannot read ${args.positionals[0]}: ${(error as Error).message}`, EXIT.notFound);
  }
  const session = parseSession(bytes);
  if (args.leaf !== undefined && !session.index.byId(args.leaf)) {
    throw new CliError(`no entry ${args.leaf} in ${args.positionals[0]}`, EXIT.notFound);
  }
  for (const problem of session.problems) io.err(`problem: ${problem.message}\n`);
  const result = buildSessionContext(session, args.leaf, { onProblem: (p) => io.err(`problem: ${p.message}\n`) });
  io.out(`${JSON.stringify(result, null, 2)}\n`);
  return EXIT.ok;
}
