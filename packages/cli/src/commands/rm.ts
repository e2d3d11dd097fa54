/** `pisync rm`: a session erased for good, everywhere the server keeps it, with a receipt. */
import type { SessionMeta } from "@pisync/protocol";
import * as z from "zod/mini";
import { ApiError } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { safeJson, sanitize } from "../sanitize.js";
import { api, type CommandHelp, formatBytes, type Io, parse } from "./common.js";
import { resolveSessionId } from "./ids.js";

const RM_HELP: CommandHelp = {
  usage: "pisync rm ID... [--yes] [--json]",
  args: ["ID..."],
  help: `Deletes sessions from the cloud for good: every generation, the stored objects, the
tree index, its usage in insights and its search entries; its share links stop working. The
images (blobs) it names that no other session of the account names go too. The
files on this machine stay (\`watch\` would send a session again if it changes here). An id may
be a unique prefix (6 characters or more). Asks before it deletes on a terminal; elsewhere it
needs --yes. Prints a receipt of what went. Another account's id is "no session" (exit 4).

  --yes    delete without asking
  --json   the receipts as JSON: { deleted: [{ id, generations, bytes, objects, blobs, sharesRevoked }] }

examples:
  pisync rm 0196a1b2-c3d4-…
  pisync rm 0196a1 0196b7 --yes`,
};

/** Deletes the sessions named (after asking on a terminal) and prints what went. */
export async function rm(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    { yes: { type: "boolean", short: "y" }, json: { type: "boolean" } },
    z.object({
      yes: z.optional(z.boolean()),
      json: z.optional(z.boolean()),
      positionals: z
        .array(z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,223}$/, "a session id, as `pisync ls` shows it")))
        .check(z.minLength(1, "a session id, as `pisync ls` shows it (or its first 6 characters or more)")),
    }),
    RM_HELP,
  );
  const ask = io.stdin?.isTTY ? io.stdin.ask : undefined;
  if (!args.yes && !ask) {
    throw new CliError(
      "pisync rm: deleting for good needs --yes when not asked on a terminal\n(pisync rm --help for the options and examples)",
      EXIT.usage,
    );
  }
  const client = api(io);
  // Every id is resolved (and shown) before anything is deleted: a typo deletes nothing.
  const chosen: SessionMeta[] = [];
  for (const ref of new Set(args.positionals)) {
    const id = await resolveSessionId(client, ref);
    try {
      chosen.push(await client.json<SessionMeta>(`/v1/sessions/${encodeURIComponent(id)}`));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        throw new CliError(
          sanitize(`no session ${ref} in the cloud (pisync ls lists them); nothing deleted`),
          EXIT.notFound,
        );
      }
      throw error;
    }
  }
  if (ask && !args.yes) {
    for (const s of chosen) {
      io.err(
        `${sanitize(`  ${s.id}  ${s.cwd ?? ""}  ${s.name ?? s.firstMessage ?? ""}`.slice(0, 160))}  ${formatBytes(s.bytes)}, ${s.generations} generation${s.generations === 1 ? "" : "s"}\n`,
      );
    }
    const answer = await ask(
      `delete ${chosen.length === 1 ? "this session" : `these ${chosen.length} sessions`} from the cloud for good? [y/N] `,
    );
    if (!/^y(es)?$/i.test(answer.trim())) {
      io.err("nothing deleted\n");
      return EXIT.failed;
    }
  }
  const deleted = [];
  for (const s of chosen) {
    const receipt = (await client.deleteSession(s.id)) ?? {
      id: s.id,
      generations: s.generations,
      bytes: s.bytes,
      objects: 0,
      sharesRevoked: [],
    };
    deleted.push(receipt);
    if (!args.json) {
      const links = receipt.sharesRevoked.length;
      const images = receipt.blobs
        ? `, ${receipt.blobs} image${receipt.blobs === 1 ? "" : "s"} no other session names`
        : "";
      io.err(
        `${sanitize(
          `deleted ${receipt.id}: ${receipt.generations} generation${receipt.generations === 1 ? "" : "s"} (${formatBytes(receipt.bytes)}, ${receipt.objects} stored object${receipt.objects === 1 ? "" : "s"}${images}), its tree index, insights usage and search entries; ${links ? `${links} share link${links === 1 ? "" : "s"} revoked (${receipt.sharesRevoked.join(", ")})` : "no live share link"}`,
        )}\n`,
      );
    }
  }
  if (args.json) io.out(`${safeJson({ deleted })}\n`);
  return EXIT.ok;
}
