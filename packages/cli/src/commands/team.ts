/**
 * `pisync team`: the team library from the command line — make a team, invite, join, list,
 * put sessions in and take them back, set the policy, read the audit log, and the folder rule.
 */
import { resolve } from "node:path";
import type { AuditList, Joined, MemberList, TeamList, TeamSessionList, TeamView } from "@pisync/protocol";
import * as z from "zod/mini";
import type { Api } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { safeJson, sanitize } from "../sanitize.js";
import { loadTeamFolders, saveTeamFolders } from "../team-folders.js";
import { api, type CommandHelp, helpText, type Io, parse } from "./common.js";

const TEAM_HELP: CommandHelp = {
  usage: "pisync team create|invite|join|ls|add|remove|policy|audit|share-folder … [--json]",
  args: ["SUBCOMMAND", "ARG..."],
  help: `Teams: sessions shared with your team, read-only and masked, searchable together.

  pisync team create NAME                  make a team (you are its owner); prints its id
  pisync team invite TEAM [--admin]        a one-time invite link (7 days) to send
  pisync team join LINK|TOKEN              join the team of an invite
  pisync team ls [TEAM] [--limit N]        your teams; with TEAM, its sessions (latest first)
  pisync team add TEAM SESSION_ID          put one of your sessions in the team
  pisync team remove TEAM SESSION_ID       take your session back out of the team
  pisync team remove TEAM --member USER    remove a member (owner or admin; yourself to leave)
  pisync team policy TEAM --public-links on|off   may share links of team sessions work
  pisync team audit TEAM [--limit N]       the team's audit log, newest first (owner or admin)
  pisync team share-folder PATH TEAM       new sessions under PATH go in TEAM after their
                                           first push (a setting of this machine)
  pisync team share-folder --list | --remove PATH

TEAM is a team's id or its name. Search a team with: pisync search QUERY --team TEAM.
  --json   the server's response as JSON

examples:
  pisync team create acme
  pisync team invite acme --admin
  pisync team share-folder ~/projects/acme acme`,
};

const ARGS = z.object({
  json: z.optional(z.boolean()),
  admin: z.optional(z.boolean()),
  list: z.optional(z.boolean()),
  member: z.optional(z.string().check(z.minLength(1, "a user id, e.g. --member mia"))),
  remove: z.optional(z.string().check(z.minLength(1, "a folder, e.g. --remove ~/projects/acme"))),
  "public-links": z.optional(z.enum(["on", "off"], { error: "on or off, e.g. --public-links off" })),
  limit: z.optional(
    z.pipe(
      z.string().check(z.regex(/^\d{1,3}$/, "a whole number from 1 to 100, e.g. --limit 20")),
      z.transform(Number),
    ),
  ),
  positionals: z.array(z.string()),
});
type Args = z.infer<typeof ARGS>;

function usage(problem: string): CliError {
  return new CliError(
    `pisync team: ${problem}\nusage: ${TEAM_HELP.usage}\n(pisync team --help for the subcommands and examples)`,
    EXIT.usage,
  );
}

/** The positionals after the subcommand, exactly `names` of them. */
function take(args: Args, names: string[]): string[] {
  const rest = args.positionals.slice(1);
  if (rest.length !== names.length) {
    throw usage(`${args.positionals[0]} expects ${names.length ? names.join(" ") : "no arguments"}`);
  }
  return rest;
}

/** A team's id from its id or name (one of the caller's teams). */
export async function teamId(client: Api, team: string): Promise<string> {
  if (/^t[a-f0-9]{16}$/.test(team)) return team;
  const { teams } = await client.json<TeamList>("/v1/teams");
  const named = teams.filter((t) => t.name === team);
  if (named.length === 1 && named[0]) return named[0].id;
  if (named.length > 1) throw new CliError(`several of your teams are named ${team}: give its id (pisync team ls)`);
  throw new CliError(`you are in no team named ${team} (pisync team ls)`, EXIT.notFound);
}

const path = (id: string) => encodeURIComponent(id);

/** `pisync team …`. */
export async function team(argv: string[], io: Io): Promise<number> {
  const args = parse(
    argv,
    {
      json: { type: "boolean" },
      admin: { type: "boolean" },
      list: { type: "boolean" },
      member: { type: "string" },
      remove: { type: "string" },
      "public-links": { type: "string" },
      limit: { type: "string" },
    },
    ARGS,
    TEAM_HELP,
  );
  const sub = args.positionals[0];
  const print = (value: unknown, text: string) => io.out(args.json ? `${safeJson(value, 2)}\n` : text);
  const limit = args.limit === undefined ? undefined : Math.min(100, Math.max(1, args.limit));
  switch (sub) {
    case undefined:
      throw new CliError(helpText(TEAM_HELP), EXIT.usage);
    case "share-folder":
      return shareFolder(args, io);
    case "create": {
      const [name] = take(args, ["NAME"]);
      const made = await api(io).postJson<TeamView>("/v1/teams", { name });
      print(made, `${sanitize(made.id)}\t${sanitize(made.name)}\n`);
      return EXIT.ok;
    }
    case "invite": {
      const client = api(io);
      const id = await teamId(client, take(args, ["TEAM"])[0] as string);
      const link = await client.postJson<{ url: string; expiresAt?: string }>(`/v1/teams/${path(id)}/invites`, {
        role: args.admin ? "admin" : "member",
      });
      if (!args.json && link.expiresAt) io.err(`${sanitize(`one use; works until ${link.expiresAt}`)}\n`);
      print(link, `${sanitize(link.url)}\n`);
      return EXIT.ok;
    }
    case "join": {
      const [link] = take(args, ["LINK"]);
      const token = (link as string).replace(/\/+$/, "").split("/").pop() ?? "";
      const joined = await api(io).postJson<Joined>(`/v1/join/${path(token)}`, {});
      print(joined, `${sanitize(`joined ${joined.team.name} (${joined.team.id}) as ${joined.role}`)}\n`);
      return EXIT.ok;
    }
    case "ls": {
      const client = api(io);
      if (args.positionals.length === 1) {
        const list = await client.json<TeamList>("/v1/teams");
        print(list, list.teams.map((t) => `${sanitize(t.id)}\t${t.role}\t${sanitize(t.name)}\n`).join(""));
        return EXIT.ok;
      }
      const id = await teamId(client, take(args, ["TEAM"])[0] as string);
      const page = await client.json<TeamSessionList>(
        `/v1/teams/${path(id)}/sessions${limit ? `?limit=${limit}` : ""}`,
      );
      print(
        page,
        page.sessions
          .map(
            (s) =>
              `${sanitize(`${s.owner}:${s.id}`)}\t${s.lastAt.slice(0, 16).replace("T", " ")}\t${sanitize(s.title)}\n`,
          )
          .join(""),
      );
      return EXIT.ok;
    }
    case "add":
    case "remove": {
      const client = api(io);
      if (sub === "remove" && args.member !== undefined) {
        const id = await teamId(client, take(args, ["TEAM"])[0] as string);
        await client.delete(`/v1/teams/${path(id)}/members/${path(args.member)}`);
        print({ removed: args.member }, `${sanitize(`removed ${args.member}`)}\n`);
        return EXIT.ok;
      }
      const [name, session] = take(args, ["TEAM", "SESSION_ID"]) as [string, string];
      const id = await teamId(client, name);
      const response = await client.putJson<{ id: string; team: { id: string; name: string } | null }>(
        `/v1/sessions/${path(session)}/team`,
        { team: sub === "add" ? id : null },
      );
      print(
        response,
        `${sanitize(response.team ? `${session} is in ${response.team.name}` : `${session} is yours alone`)}\n`,
      );
      return EXIT.ok;
    }
    case "policy": {
      const client = api(io);
      const id = await teamId(client, take(args, ["TEAM"])[0] as string);
      const links = args["public-links"];
      if (links === undefined) throw usage("policy needs --public-links on|off");
      const policy = await client.putJson<{ publicLinks: boolean }>(`/v1/teams/${path(id)}/policy`, {
        publicLinks: links === "on",
      });
      print(policy, `public links ${policy.publicLinks ? "on" : "off"}\n`);
      return EXIT.ok;
    }
    case "audit": {
      const client = api(io);
      const id = await teamId(client, take(args, ["TEAM"])[0] as string);
      const log = await client.json<AuditList>(`/v1/teams/${path(id)}/audit${limit ? `?limit=${limit}` : ""}`);
      print(
        log,
        log.events
          .map((e) => sanitize(`${e.at}\t${e.actor}\t${e.action}${e.target ? `\t${e.target}` : ""}`))
          .join("\n") + (log.events.length ? "\n" : ""),
      );
      return EXIT.ok;
    }
    case "members": {
      const client = api(io);
      const id = await teamId(client, take(args, ["TEAM"])[0] as string);
      const list = await client.json<MemberList>(`/v1/teams/${path(id)}/members`);
      print(list, list.members.map((m) => `${sanitize(m.user)}\t${m.role}\t${m.joinedAt}\n`).join(""));
      return EXIT.ok;
    }
    default:
      throw usage(`no subcommand ${sanitize(sub)}`);
  }
}

/** `pisync team share-folder PATH TEAM | --list | --remove PATH`: the folder rules of this machine. */
async function shareFolder(args: Args, io: Io): Promise<number> {
  const folders = loadTeamFolders(io.env);
  if (args.list) {
    io.out(args.json ? `${safeJson({ folders }, 2)}\n` : folders.map((f) => `${f.path}\t${f.team}\n`).join(""));
    return EXIT.ok;
  }
  if (args.remove !== undefined) {
    const gone = resolve(args.remove);
    const kept = folders.filter((f) => f.path !== gone);
    if (kept.length === folders.length) throw new CliError(`no folder rule for ${gone}`, EXIT.notFound);
    saveTeamFolders(kept, io.env);
    return EXIT.ok;
  }
  const [folder, name] = take(args, ["PATH", "TEAM"]) as [string, string];
  // The team is checked now: a rule naming no team of yours would fail at every push.
  const id = await teamId(api(io), name);
  const at = resolve(folder);
  saveTeamFolders([...folders.filter((f) => f.path !== at), { path: at, team: id }], io.env);
  io.err(`${sanitize(`new sessions under ${at} go in team ${id} after their first push`)}\n`);
  if (args.json) io.out(`${safeJson({ path: at, team: id }, 2)}\n`);
  return EXIT.ok;
}
