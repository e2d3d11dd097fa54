/** `generations`: the copies the cloud keeps of one session. */
import * as z from "zod/mini";
import { ApiError } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { safeJson, sanitize } from "../sanitize.js";
import { api, type CommandHelp, formatBytes, type Io, parse } from "./common.js";
import { resolveSessionId } from "./ids.js";

interface GenerationView {
  generation: number;
  bytes: number;
  lines: number;
  createdAt: string;
  reason?: string;
}

const HELP: CommandHelp = {
  usage: "pisync generations ID [--json]",
  args: ["ID"],
  help: `The generations the cloud keeps of a session, oldest first: a new one starts when a
file was rewritten, truncated or continued on two machines; the older ones stay readable.
The last one is the current copy. Restore an older one beside it with
\`pisync pull ID --generation N\` (nothing is overwritten).

  --json   one JSON document: { generations: [{ generation, bytes, lines, createdAt, reason }] }

examples:
  pisync generations 0196a1b2-…
  pisync pull 0196a1b2-… --generation 1`,
};

/**
 * How a generation stands: the last one is the current copy; each other one was replaced by the
 * next (the server's `reason` "replaced" says the same thing of the newer one, so it is not repeated).
 */
function generationNote(g: GenerationView, next: GenerationView | undefined): string {
  const standing = next ? `replaced by ${next.generation}` : "current";
  const reason = g.reason && g.reason !== "replaced" ? `, ${sanitize(g.reason)}` : "";
  return `${standing}${reason}`;
}

/** Lists a session's generations with their size and time. */
export async function generations(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { json: { type: "boolean" } },
    z.object({
      json: z.optional(z.boolean()),
      positionals: z.tuple([
        z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "a session id, as `pisync ls` shows it")),
      ]),
    }),
    HELP,
  );
  const client = api(io);
  // A unique prefix (≥ 6 characters) stands for the whole id.
  const id = await resolveSessionId(client, args.positionals[0]);
  let list: GenerationView[];
  try {
    ({ generations: list } = await client.json<{ generations: GenerationView[] }>(`/v1/sessions/${id}/generations`));
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new CliError(`no session ${id} in the cloud (pisync ls lists them)`, EXIT.notFound);
    }
    throw error;
  }
  if (args.json) {
    io.out(`${safeJson({ generations: list }, 2)}\n`);
    return EXIT.ok;
  }
  list.forEach((g, i) => {
    const note = generationNote(g, list[i + 1]);
    // Every field is the server's to say: the whole line goes through the sanitiser.
    io.out(
      `${sanitize(
        `${String(g.generation).padStart(4)}  ${g.createdAt}  ${formatBytes(Number(g.bytes)).padStart(10)}  ${g.lines} lines  ${note}`,
      )}\n`,
    );
  });
  return EXIT.ok;
}
