/**
 * `pisync team` against `npm start`: make a team, invite, join, list, put sessions in and take
 * them back, the policy, the audit log, the folder rule, `search --team`, and the exit codes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tokens } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { buildCli, machine, type Server, startServer } from "@pisync/testing/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: Server;
let dataDir: string;
/** The server's own user ("local"), who makes the team. */
let owner: ReturnType<typeof machine>;
/** A second user, who joins it. */
let member: ReturnType<typeof machine>;
let outsider: ReturnType<typeof machine>;

const session = (id: string, cwd: string, text: string) =>
  [
    { type: "session", version: 3, id, timestamp: "2026-02-01T00:00:00.000Z", cwd },
    {
      type: "message",
      id: "e0000001",
      parentId: null,
      timestamp: "2026-02-01T00:00:01.000Z",
      message: { role: "user", content: text, timestamp: 1 },
    },
  ]
    .map((line) => `${JSON.stringify(line)}\n`)
    .join("");

const json = (r: { stdout: string }) => JSON.parse(r.stdout);

beforeAll(async () => {
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "pisync-team-cli-"));
  server = await startServer(dataDir);
  owner = machine(server.url, server.token);
  // More users: tokens made straight in the server's store (its second connection; WAL).
  const stores = embeddedStores(dataDir);
  try {
    const tokens = new Tokens(stores.meta);
    member = machine(server.url, (await tokens.create("mia", "test")).token);
    outsider = machine(server.url, (await tokens.create("otto", "test")).token);
  } finally {
    stores.close();
  }
}, 120_000);

afterAll(async () => {
  await owner?.cleanup();
  await member?.cleanup();
  await outsider?.cleanup();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("pisync team", () => {
  let teamId: string;

  it("--help says every subcommand; a wrong one is a usage error (2)", () => {
    const help = owner.run(["team", "--help"]);
    expect(help.code).toBe(0);
    for (const sub of ["create", "invite", "join", "ls", "add", "remove", "policy", "audit", "share-folder"]) {
      expect(help.stdout + help.stderr).toContain(`pisync team ${sub}`);
    }
    expect(owner.run(["team", "frobnicate"]).code).toBe(2);
    expect(owner.run(["team", "create"]).code).toBe(2);
    expect(owner.run(["team", "policy", "acme", "--public-links", "maybe"]).code).toBe(2);
  });

  it("create, invite, join, ls: the owner's link brings the member in", () => {
    const made = owner.run(["team", "create", "acme", "--json"]);
    expect(made.code, made.stderr).toBe(0);
    teamId = json(made).id;
    expect(json(made)).toEqual({ id: teamId, name: "acme", role: "owner" });
    const link = owner.run(["team", "invite", "acme"]);
    expect(link.code, link.stderr).toBe(0);
    const url = link.stdout.trim();
    expect(url).toMatch(/\/join\/pti_/);
    // A member may not invite (403: exit 1); someone not in the team finds no team (exit 4).
    expect(outsider.run(["team", "invite", teamId]).code).toBe(4);
    const joined = member.run(["team", "join", url]);
    expect(joined.code, joined.stderr).toBe(0);
    expect(joined.stdout).toContain(`joined acme (${teamId}) as member`);
    expect(member.run(["team", "join", url]).code).toBe(4);
    expect(member.run(["team", "invite", "acme"]).code).toBe(1);
    expect(member.run(["team", "ls"]).stdout).toContain(`${teamId}\tmember\tacme`);
    expect(json(outsider.run(["team", "ls", "--json"]))).toEqual({ teams: [] });
  });

  it("share-folder: a session first pushed from under the folder goes in the team; others do not", () => {
    const rule = member.run(["team", "share-folder", "/srv/acme", "acme"]);
    expect(rule.code, rule.stderr).toBe(0);
    expect(member.run(["team", "share-folder", "--list"]).stdout).toBe(`/srv/acme\t${teamId}\n`);
    const dir = join(member.sessionsRoot, "--srv-acme--");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "2026-02-01T00-00-00-000Z_s-acme.jsonl"),
      session("s-acme", "/srv/acme/api", "kestrel plans"),
    );
    writeFileSync(join(dir, "2026-02-01T00-00-00-000Z_s-home.jsonl"), session("s-home", "/home/mia", "kestrel diary"));
    const push = member.run(["push"]);
    expect(push.code, push.stderr).toBe(0);
    const listed = json(owner.run(["team", "ls", "acme", "--json"]));
    expect(listed.sessions.map((s: { owner: string; id: string }) => `${s.owner}:${s.id}`)).toEqual(["mia:s-acme"]);
  });

  it("add and remove put one's own session in and take it back; another's is not found (4)", async () => {
    const r = await fetch(`${server.url}/v1/sessions/s-own`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${server.token}`, "Upload-Offset": "0" },
      body: session("s-own", "/srv", "owner's kestrel"),
    });
    expect(r.ok).toBe(true);
    expect(owner.run(["team", "add", "acme", "s-own"]).stdout).toBe("s-own is in acme\n");
    expect(member.run(["team", "add", "acme", "s-own"]).code).toBe(4);
    expect(owner.run(["team", "ls", "acme"]).stdout).toContain("local:s-own");
    expect(owner.run(["team", "remove", "acme", "s-own"]).stdout).toBe("s-own is yours alone\n");
    expect(owner.run(["team", "ls", "acme"]).stdout).not.toContain("local:s-own");
  });

  it("search --team finds the team's sessions only, named by owner", async () => {
    // The team's index follows in the background: at most 10 s.
    const until = Date.now() + 10_000;
    let found = member.run(["search", "kestrel", "--team", "acme", "--json"]);
    while (json(found).sessions.length === 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      found = member.run(["search", "kestrel", "--team", "acme", "--json"]);
    }
    expect(found.code, found.stderr).toBe(0);
    expect(json(found).sessions.map((s: { owner: string; sessionId: string }) => `${s.owner}:${s.sessionId}`)).toEqual([
      "mia:s-acme",
    ]);
    expect(member.run(["search", "kestrel", "--team", "acme"]).stdout).toContain("mia:s-acme");
    expect(outsider.run(["search", "kestrel", "--team", teamId]).code).toBe(4);
  });

  it("policy turns public links off: sharing a team session then fails; the audit log records it", () => {
    expect(member.run(["team", "policy", "acme", "--public-links", "off"]).code).toBe(1);
    const off = owner.run(["team", "policy", "acme", "--public-links", "off", "--json"]);
    expect(off.code, off.stderr).toBe(0);
    expect(json(off)).toEqual({ publicLinks: false });
    const share = member.run(["share", "s-acme"]);
    expect(share.code).toBe(1);
    expect(share.stderr).toContain("does not allow public links");
    const audit = owner.run(["team", "audit", "acme", "--json"]);
    expect(audit.code, audit.stderr).toBe(0);
    const actions = json(audit).events.map((e: { action: string }) => e.action);
    expect(actions[0]).toBe("policy.changed");
    expect(actions).toEqual(expect.arrayContaining(["invite.created", "member.joined", "session.added"]));
    expect(member.run(["team", "audit", "acme"]).code).toBe(1);
  });

  it("insights --team: the team's usage; the split by member for its owner", () => {
    const mine = owner.run(["insights", "--team", "acme", "--by", "member"]);
    expect(mine.code, mine.stderr).toBe(0);
    expect(mine.stdout).toMatch(/\nmember\s+cost/);
    const theirs = member.run(["insights", "--team", "acme", "--by", "member", "--json"]);
    expect(theirs.code, theirs.stderr).toBe(0);
    expect(json(theirs).byMember).toBeUndefined();
    expect(owner.run(["insights", "--by", "member"]).code).toBe(2);
    expect(outsider.run(["insights", "--team", teamId]).code).toBe(4);
  });

  it("remove --member takes a member out; they no longer find the team (4)", () => {
    const removed = owner.run(["team", "remove", "acme", "--member", "mia"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(member.run(["team", "ls", teamId]).code).toBe(4);
    expect(json(owner.run(["team", "ls", "acme", "--json"])).sessions).toEqual([]);
  });
});
