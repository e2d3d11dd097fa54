/** `device rename`: what this machine (or another of yours) is called in status, insights and `/devices`. */
import { DEVICE_ID } from "@pisync/protocol";
import * as z from "zod/mini";
import { CliError, EXIT } from "../cli-error.js";
import { sanitize } from "../sanitize.js";
import { api, type CommandHelp, type Io, parse } from "./common.js";

const HELP: CommandHelp = {
  usage: "pisync device rename NAME [--id TOKEN_ID]",
  args: ["rename", "NAME"],
  help: `Renames this machine's token: the name status, insights' "by machine", the tree's branch
labels and the library's Devices page show. A machine signed in from the browser starts with
its host name.

  --id TOKEN_ID   rename another of your tokens (its id, as /devices lists them) instead

examples:
  pisync device rename "work laptop"
  pisync device rename build-box --id 3f2a9c0d1b7e`,
};

const Args = z.object({
  id: z.optional(z.string().check(z.regex(DEVICE_ID, "a token id is 12 hex digits, as /devices lists them"))),
  positionals: z.tuple([
    z.literal("rename", "the only subcommand is rename"),
    z
      .pipe(
        z.string(),
        z.transform((v: string) => v.trim()),
      )
      .check(z.minLength(1, "a name of 1 to 100 characters"), z.maxLength(100, "a name of 1 to 100 characters")),
  ]),
});

/** Renames this machine's token (or the one `--id` names). */
export async function device(argv: string[], io: Io): Promise<number> {
  const args = parse(argv, { id: { type: "string" } }, Args, HELP);
  const name = args.positionals[1];
  const client = api(io);
  let id = args.id;
  if (!id) {
    const { tokens } = await client.json<{ tokens: { id: string; current: boolean }[] }>("/v1/tokens");
    id = tokens.find((t) => t.current)?.id;
    if (!id) throw new CliError("the server did not say which token is this machine's: pass --id", EXIT.failed);
  }
  const renamed = await client.patchJson<{ id: string; name: string }>(`/v1/tokens/${encodeURIComponent(id)}`, {
    name,
  });
  io.err(`renamed ${args.id ? `token ${renamed.id}` : "this machine"} to "${sanitize(renamed.name)}"\n`);
  return EXIT.ok;
}
