/** `search`: find sessions in the cloud by what was said in them. */
import * as z from "zod/mini";
import { ApiError } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { safeJson, sanitize } from "../sanitize.js";
import { api, type CommandHelp, type Io, parse } from "./common.js";
import { teamId } from "./team.js";

interface SearchResponse {
  sessions: Array<{
    sessionId: string;
    /** A team search's hits name their owner. */
    owner?: string;
    name?: string;
    cwd?: string;
    entries: Array<{ entryId: string; kind: string; time: number; snippet: Array<{ text: string; hit: boolean }> }>;
  }>;
  cursor?: string;
}

const SEARCH_HELP: CommandHelp = {
  usage: "pisync search QUERY [--json] [--limit N] [--team TEAM]",
  args: ["QUERY"],
  help: `Sessions in the cloud that match QUERY, best first: per session its id, name and project
folder, its best entries (id, kind, snippet with the matches in [brackets]) and the command
that brings it onto this machine.

QUERY: words, "exact phrases", -exclude, prefix*, and filters cwd:TEXT,
role:user|assistant|tool, since:7d (12h, 2w, or a date), before:2026-01-01, model:TEXT, label:TEXT,
file:PATH (a path a tool touched; file:*.ts, file:src/ a folder).
Quote the whole query for your shell; it may start with an exclusion ("-draft notes").

  --json       one JSON document: the server's response, { sessions: [...] }
  --limit N    at most N sessions (1-100, default 10)
  --team TEAM  search a team's sessions (every member's it holds) instead of yours; TEAM is
               its id or name (pisync team ls)

examples:
  pisync search 'retry "S3 bucket"'
  pisync search 'deploy -staging role:user since:7d'
  pisync search 'cdk* cwd:infra' --json | jq -r '.sessions[].sessionId'`,
};

const Args = z.object({
  json: z.optional(z.boolean()),
  limit: z.optional(
    z
      .pipe(z.string().check(z.regex(/^\d{1,3}$/, "a whole number from 1 to 100")), z.transform(Number))
      .check(z.refine((n) => n >= 1 && n <= 100, "a whole number from 1 to 100")),
  ),
  team: z.optional(z.string().check(z.minLength(1, "a team's id or name, e.g. --team acme"))),
  positionals: z.tuple([z.string().check(z.minLength(1, "the query is empty"))]),
});

/** Options whose value follows them (a value starting with a dash is still theirs). */
const VALUED = new Set(["--limit", "--team"]);

/**
 * The arguments with the query read as a positional even when it starts with an exclusion
 * (`"-polyfill Temporal"`): an argument with one leading dash other than `-h` is the query, not
 * an option (this command's options are all long ones).
 */
export function queryAsPositional(argv: readonly string[]): string[] {
  const end = argv.indexOf("--");
  const before = end < 0 ? argv : argv.slice(0, end);
  const after = end < 0 ? [] : argv.slice(end + 1);
  const isQuery = (arg: string) => /^-[^-]/u.test(arg) && arg !== "-h";
  const queries = before.filter(isQuery);
  if (queries.length === 0) return [...argv];
  // A query right after --limit is its value, not a query: left for the option's own check.
  const valued = (i: number) => VALUED.has(before[i - 1] ?? "");
  const options = before.filter((arg, i) => !isQuery(arg) || valued(i));
  return [...options, "--", ...before.filter((arg, i) => isQuery(arg) && !valued(i)), ...after];
}

/** Searches the user's sessions. A query the server refuses is a usage error (exit 2). */
export async function search(argv: string[], io: Io): Promise<number> {
  const args = parse(
    queryAsPositional(argv),
    { json: { type: "boolean" }, limit: { type: "string" }, team: { type: "string" } },
    Args,
    SEARCH_HELP,
  );
  const [query] = args.positionals;
  let response: SearchResponse;
  const client = api(io);
  const team = args.team === undefined ? "" : `&team=${encodeURIComponent(await teamId(client, args.team))}`;
  try {
    response = await client.json<SearchResponse>(
      `/v1/search?q=${encodeURIComponent(query)}&limit=${args.limit ?? 10}${team}`,
    );
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) {
      throw new CliError(`pisync search: ${error.message}\nusage: ${SEARCH_HELP.usage}`, EXIT.usage);
    }
    throw error;
  }
  if (args.json) {
    io.out(`${safeJson(response, 2)}\n`);
    return EXIT.ok;
  }
  for (const session of response.sessions) {
    const id = session.owner ? `${session.owner}:${session.sessionId}` : session.sessionId;
    io.out(`${sanitize(`${id}  ${session.cwd ?? ""}  ${session.name ?? ""}`.trimEnd())}\n`);
    for (const entry of session.entries) {
      const snippet = entry.snippet.map((p) => (p.hit ? `[${p.text}]` : p.text)).join("");
      io.out(`  ${sanitize(`${entry.entryId}  ${entry.kind}  ${snippet.replace(/\s+/g, " ").trim()}`)}\n`);
    }
    // A team session is read with `pisync team ls`'s id, not pulled by id.
    if (!session.owner) io.out(`  ${sanitize(`pisync pull ${session.sessionId}`)}\n`);
  }
  if (response.sessions.length === 0) io.out("no sessions match\n");
  return EXIT.ok;
}
