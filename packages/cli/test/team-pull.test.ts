/**
 * `pisync pull --team` against `npm start`: a member continues a colleague's team session on
 * their own machine as a fork (a new id, parentSession naming the team, owner and session; the
 * lines masked and counted as imported), where pi looks for it; pi opens it as the conversation
 * it was. Anyone outside the team, and a session out of it, find nothing (4); misuse is 2.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { Tokens } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { assistantMessage } from "@pisync/testing";
import { buildCli, machine, type Server, startServer } from "@pisync/testing/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piFolderName } from "../src/paths.js";

const SECRET = "AKIAIOSFODNN7EXAMPLQ";

let server: Server;
let dataDir: string;
/** The server's own user ("local"): the team's owner, who continues mia's session. */
let owner: ReturnType<typeof machine>;
let member: ReturnType<typeof machine>;
let outsider: ReturnType<typeof machine>;
let teamId: string;
let original: string;

const json = (r: { stdout: string }) => JSON.parse(r.stdout);

beforeAll(async () => {
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "pisync-team-pull-"));
  server = await startServer(dataDir);
  owner = machine(server.url, server.token);
  const stores = embeddedStores(dataDir);
  try {
    const tokens = new Tokens(stores.meta);
    member = machine(server.url, (await tokens.create("mia", "test")).token);
    outsider = machine(server.url, (await tokens.create("otto", "test")).token);
  } finally {
    stores.close();
  }
  teamId = json(owner.run(["team", "create", "acme", "--json"])).id;
  const url = owner.run(["team", "invite", "acme"]).stdout.trim();
  expect(member.run(["team", "join", url]).code).toBe(0);
  // mia's session, written by pi itself, with a credential in it; pushed, then put in the team.
  const sm = SessionManager.create("/home/mia/site", join(member.sessionsRoot, piFolderName("/home/mia/site")));
  sm.appendMessage({ role: "user", content: `deploy with key ${SECRET} please`, timestamp: 1 });
  sm.appendMessage(assistantMessage("done"));
  sm.appendMessage({ role: "user", content: "and then the retry jitter", timestamp: 2 });
  original = readFileSync(sm.getSessionFile() as string, "utf8");
  const id = sm.getSessionId();
  expect(member.run(["push"]).code).toBe(0);
  expect(member.run(["team", "add", "acme", id]).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await owner?.cleanup();
  await member?.cleanup();
  await outsider?.cleanup();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("pisync pull --team", () => {
  it("--help names it", () => {
    const help = owner.run(["pull", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout + help.stderr).toContain("pisync pull --team TEAM ID|OWNER:ID");
  });

  it("imports a colleague's team session as a fork of one's own, masked, where pi finds it", () => {
    const id = JSON.parse(original.split("\n")[0] as string).id as string;
    const pulled = owner.run(["pull", "--team", "acme", id, "--cwd", "/home/olivia/site", "--json"]);
    expect(pulled.code, pulled.stderr).toBe(0);
    const answer = json(pulled);
    expect(answer).toMatchObject({ already: false, parentSession: `pisync-team:${teamId}/mia:${id}` });
    expect(answer.sessionId).not.toBe(id);
    expect(answer.path.startsWith(join(owner.sessionsRoot, piFolderName("/home/olivia/site")))).toBe(true);
    const text = readFileSync(answer.path, "utf8");
    const [header, ...rest] = text.split("\n");
    expect(JSON.parse(header as string)).toMatchObject({
      type: "session",
      id: answer.sessionId,
      cwd: "/home/olivia/site",
      parentSession: `pisync-team:${teamId}/mia:${id}`,
      pisyncImported: rest.filter(Boolean).length,
    });
    // Masked as a share link's download: the credential never reaches another member's disk.
    expect(text).not.toContain(SECRET);
    expect(original).toContain(SECRET);
    expect(text).toContain("and then the retry jitter");
    // pi opens the fork: the same conversation, the credential masked.
    const messages = SessionManager.open(answer.path).buildSessionContext().messages;
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(messages)).toContain("deploy with key");
    expect(JSON.stringify(messages)).toContain("and then the retry jitter");
    // Again, by OWNER:ID: the same fork, already here.
    const again = owner.run(["pull", "--team", teamId, `mia:${id}`, "--cwd", "/home/olivia/site", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(json(again)).toMatchObject({ already: true, sessionId: answer.sessionId, path: answer.path });
    expect(owner.run(["pull", "--team", "acme", id, "--cwd", "/home/olivia/site"]).stdout.trim()).toBe(answer.path);
  });

  it("finds nothing (4) outside the team or for a session out of it; misuse is a usage error (2)", () => {
    const id = JSON.parse(original.split("\n")[0] as string).id as string;
    expect(outsider.run(["pull", "--team", teamId, `mia:${id}`]).code).toBe(4);
    expect(outsider.run(["pull", "--team", "acme", id]).code).toBe(4);
    expect(owner.run(["pull", "--team", "acme", "mia:not-in-team"]).code).toBe(4);
    expect(owner.run(["pull", `mia:${id}`]).code).toBe(2);
    expect(owner.run(["pull", "--team", "acme", id, "--generation", "1"]).code).toBe(2);
    expect(
      owner.run(["pull", "--team", "acme", "https://pisync.example.com/s/AbCdEfGhIjKlMnOpQrStUv.k1.xyz"]).code,
    ).toBe(2);
  });
});
