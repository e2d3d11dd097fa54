/**
 * The command layer as a newcomer meets it, against `npm start`: exit codes for every refusal,
 * human messages for bad arguments, help and version, push's words and progress bar, status
 * without deleted files, and older generations brought back beside the current copy.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hookedProxy, machine, npmStartForFile } from "@pisync/testing/cli";
import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { main } from "../src/main.js";
import { piFileName, piFolderName } from "../src/paths.js";

const server = npmStartForFile();

/** A token of the right shape that the server does not know. */
const UNKNOWN_TOKEN = `pst_${"A".repeat(43)}`;

/** Writes a small session file where pi would; returns its path. */
function writeSession(root: string, id: string, lines: string[], cwd = "/home/dev/commands"): string {
  const folder = join(root, piFolderName(cwd));
  mkdirSync(folder, { recursive: true });
  const path = join(folder, piFileName("2026-02-01T00:00:00.000Z", id));
  const header = { type: "session", version: 3, id, timestamp: "2026-02-01T00:00:00.000Z", cwd };
  const entries = lines.map((content, i) =>
    JSON.stringify({
      type: "message",
      id: `e000000${i}`,
      parentId: i ? `e000000${i - 1}` : null,
      timestamp: "2026-02-01T00:00:01.000Z",
      message: { role: "user", content, timestamp: i },
    }),
  );
  writeFileSync(path, `${[JSON.stringify(header), ...entries].join("\n")}\n`);
  return path;
}

/** Runs `test` on a fresh machine (its own HOME) logged in with `token`, then removes it. */
async function onMachine(test: (m: ReturnType<typeof machine>) => Promise<void>, token = server.token) {
  const m = machine(server.url, token);
  try {
    await test(m);
  } finally {
    await m.cleanup();
  }
}

describe("exit codes", () => {
  it("a token the server refuses exits 3 from every command that talks to it, with nothing pending too", async () => {
    await onMachine(async (m) => {
      for (const args of [
        ["ls"],
        ["push"],
        ["shares"],
        ["pull", "some-session"],
        ["share", "some-session"],
        ["unshare", "A".repeat(22)],
        ["status"],
        ["generations", "some-session"],
      ]) {
        const r = m.run(args);
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(3);
        expect(r.stderr).toContain(`the server at ${server.url} refused the token`);
      }
      const login = m.run(["login", "--endpoint", server.url, "--token", UNKNOWN_TOKEN]);
      expect(login.code).toBe(3);
    }, UNKNOWN_TOKEN);
  }, 60_000);

  it("not logged in exits 3; a pasted token is trimmed; a malformed PISYNC_TOKEN is named as such", async () => {
    const noEnv = { PISYNC_ENDPOINT: "", PISYNC_TOKEN: "" };
    await onMachine(async (m) => {
      const none = m.run(["ls"], noEnv);
      expect(none.code).toBe(3);
      expect(none.stderr).toContain("not logged in");

      const login = m.run(["login", "--endpoint", ` ${server.url}/ `, "--token", ` ${server.token}\n`], noEnv);
      expect(login.code, login.stderr).toBe(0);
      expect(JSON.parse(readFileSync(join(m.home, ".config", "pisync", "config.json"), "utf8"))).toEqual({
        endpoint: server.url,
        token: server.token,
      });
      expect(m.run(["ls"], noEnv).code).toBe(0);

      const malformed = m.run(["ls"], { PISYNC_ENDPOINT: "", PISYNC_TOKEN: "pst_short" });
      expect(malformed.code).toBe(3);
      expect(malformed.stderr).toContain("PISYNC_TOKEN is malformed");
      expect(malformed.stderr).not.toContain("not logged in");
      // A trailing space in the variable is not a malformed token.
      expect(m.run(["ls"], { PISYNC_ENDPOINT: "", PISYNC_TOKEN: `${server.token} ` }).code).toBe(0);
    });
  }, 60_000);

  it("missing things exit 4; bad arguments exit 2", async () => {
    await onMachine(async (m) => {
      expect(m.run(["pull", "no-such-session"]).code).toBe(4);
      expect(m.run(["generations", "no-such-session"]).code).toBe(4);
      expect(m.run(["share", "no-such-session"]).code).toBe(4);
      expect(m.run(["unshare", "A".repeat(22)]).code).toBe(4);
      expect(m.run(["context", join(m.home, "missing.jsonl")]).code).toBe(4);
      expect(m.run(["nonsense"]).code).toBe(2);
      expect(m.run([]).code).toBe(2);
    });
  }, 60_000);
});

describe("messages for people", () => {
  it("every validation error names the argument, says what is allowed, and shows the usage", async () => {
    await onMachine(async (m) => {
      const path = writeSession(m.sessionsRoot, "msg-1", ["hello"]);
      const cases: [string[], number, string][] = [
        [["pull"], 2, "pisync pull: expects one argument: ID|LINK"],
        [["pull", "../etc"], 2, "pisync pull: ID|LINK: a session id"],
        [["pull", "x", "--generation", "0"], 2, "--generation: a generation number from 1, e.g. --generation 2"],
        [["pull", "x", "--cwd"], 2, "pisync pull: --cwd needs a value"],
        [["ls", "--bogus"], 2, "pisync ls: unknown option --bogus"],
        [["ls", "extra"], 2, "pisync ls: takes no arguments"],
        [["unshare", "nope"], 2, "SHARE_ID: a share id: 22 letters"],
        [["login", "--token", server.token], 2, "--endpoint is required: the server's address is an http://"],
        [["login", "--endpoint", "ftp://x", "--token", server.token], 2, "--endpoint: the server's address"],
        [["login", "--endpoint", server.url, "--token", "nope"], 2, "--token: a pisync token is pst_"],
        [["share", path, "--expires", "soon"], 2, "--expires: a duration: minutes, hours or days (30m, 12h, 7d)"],
        [["share", path, "--expires", "100d"], 2, "--expires: at most 90 days on this server, e.g. --expires 7d"],
        [["share", "/missing/file.jsonl"], 4, "no such file: /missing/file.jsonl"],
      ];
      for (const [args, code, message] of cases) {
        const r = m.run(args);
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(code);
        expect(r.stderr, args.join(" ")).toContain(message);
        expect(r.stderr, args.join(" ")).not.toMatch(/✖|Invalid input|expiresIn/);
        if (code === 2) expect(r.stderr).toContain(`usage: pisync ${args[0]}`);
      }
    });
  }, 60_000);

  it("--help for each command, with examples; --version from the package", async () => {
    await onMachine(async (m) => {
      const commands = ["login", "watch", "push", "status", "ls", "pull", "generations", "context", "share"];
      for (const command of [...commands, "shares", "unshare"]) {
        const r = m.run([command, "--help"]);
        expect(r.code, command).toBe(0);
        expect(r.stdout).toContain(`usage: pisync ${command}`);
        expect(r.stdout.split("\n").length, command).toBeGreaterThan(4);
      }
      for (const command of commands) expect(m.run([command, "-h"]).stdout).toContain("examples:");
      expect(m.run(["help", "pull"]).stdout).toContain("--generation N");
      for (const flag of ["--version", "-v"]) {
        const r = m.run([flag]);
        expect(r.code).toBe(0);
        expect(r.stdout).toBe(`${packageJson.version}\n`);
      }
    });
  }, 60_000);
  it("ls prints what sessions say without their control characters", async () => {
    await onMachine(async (m) => {
      const id = `escapes-${Date.now()}`;
      const folder = join(m.sessionsRoot, piFolderName("/home/dev/escapes"));
      mkdirSync(folder, { recursive: true });
      const header = { type: "session", version: 3, id, timestamp: "2026-02-01T00:00:00.000Z", cwd: "/x\u001b[31mred" };
      const name = {
        type: "session_info",
        id: "n1",
        parentId: null,
        timestamp: "2026-02-01T00:00:01.000Z",
        name: "evil \u001b]0;title\u0007 name\nnext",
      };
      writeFileSync(
        join(folder, piFileName(header.timestamp, id)),
        `${JSON.stringify(header)}\n${JSON.stringify(name)}\n`,
      );
      expect(m.run(["push"]).code).toBe(0);
      const listed = m.run(["ls"]);
      const line = listed.stdout.split("\n").find((l) => l.startsWith(id)) as string;
      expect(line).toContain("/x\\x1b[31mred  evil \\x1b]0;title\\x07 name\\x0anext");
      for (const control of ["\u001b", "\u0007"]) expect(listed.stdout).not.toContain(control);
    });
  }, 60_000);
});

describe("share --md", () => {
  it("prints the conversation as Markdown, masked as the link shows it; the link goes to stderr", async () => {
    await onMachine(async (m) => {
      const token = `ghp_${"Z9y8X7w6V5".repeat(3)}abcdef`;
      const path = writeSession(m.sessionsRoot, `md-${Date.now()}`, [
        "first, with ```` fences",
        `then the token ${token}`,
        "and \u001b[31m a colour",
      ]);
      const r = m.run(["share", path, "--md"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/\/s\/\S+ expires /);
      expect(r.stdout.match(/^## User/gm)).toHaveLength(3);
      expect(r.stdout).toContain("[masked: github-token]");
      expect(r.stdout).not.toContain(token.slice(0, 16));
      expect(r.stdout).not.toContain("\u001b");
    });
  }, 60_000);
});

describe("push and status", () => {
  it("push says what it sent, and says so when there is nothing to send", async () => {
    await onMachine(async (m) => {
      const empty = m.run(["push"]);
      expect(empty.code).toBe(0);
      expect(empty.stderr).toContain("nothing to send: no session files in");
      const path = writeSession(m.sessionsRoot, "push-1", ["one", "two"]);
      const first = m.run(["push"]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain(`sent ${path}`);
      expect(first.stderr).not.toContain("\r");
      const again = m.run(["push"]);
      expect(again.stderr).toContain("nothing to send: the file is backed up");
    });
  }, 60_000);

  it("on a terminal, push draws a bar of bytes and files in place", async () => {
    await onMachine(async (m) => {
      for (let i = 0; i < 3; i++) writeSession(m.sessionsRoot, `bar-${i}`, ["x".repeat(5000), "y".repeat(5000)]);
      const pushOnTerminal = async () => {
        let err = "";
        const code = await main(["push"], {
          out: () => {},
          err: (text) => {
            err += text;
          },
          env: m.env,
          isTTY: true,
          columns: 100,
        });
        expect(code, err).toBe(0);
        return err;
      };
      const err = await pushOnTerminal();
      const frames = err.split("\r").filter((f) => f.startsWith("["));
      expect(frames.length).toBeGreaterThan(0);
      const last = frames[frames.length - 1];
      expect(last).toMatch(/^\[#{10,}\] 100% {2}[\d.]+ KiB of [\d.]+ KiB {2}files 3\/3/);
      expect(err).toMatch(/sent [\d.]+ KiB of 3 files\n$/);
      // Nothing left to send: the bar is wiped, and the terminal shows just the message.
      const again = await pushOnTerminal();
      const shown = again.trimEnd().split("\r").at(-1);
      expect(shown).toBe("\x1b[Knothing to send: all 3 files are backed up");
    });
  }, 60_000);

  it("status leaves out files deleted here unless --all", async () => {
    await onMachine(async (m) => {
      const kept = writeSession(m.sessionsRoot, "status-kept", ["stay"]);
      const gone = writeSession(m.sessionsRoot, "status-gone", ["go"]);
      expect(m.run(["push"]).code).toBe(0);
      unlinkSync(gone);
      const plain = m.run(["status"]);
      expect(plain.code).toBe(0);
      expect(plain.stdout).toContain(kept);
      expect(plain.stdout).not.toContain(gone);
      expect(plain.stdout).toContain("(1 file deleted here, still in the cloud: pisync status --all)");
      const all = m.run(["status", "--all"]);
      expect(all.stdout).toContain(gone);
      expect(all.stdout).toContain("deleted locally");
      const json = JSON.parse(m.run(["status", "--json"]).stdout) as { files: { file: string }[] };
      expect(json.files.map((f) => f.file)).toEqual([kept]);
    });
  }, 60_000);
});

describe("older generations", () => {
  it("generations lists them; pull --generation N brings one back beside the current copy", async () => {
    await onMachine(async (m) => {
      const id = `gen-${Date.now()}`;
      const path = writeSession(m.sessionsRoot, id, ["first version", "its answer"]);
      const firstBytes = readFileSync(path);
      expect(m.run(["push"]).code).toBe(0);
      // Rewritten in place: the cloud keeps the first version as generation 1.
      writeSession(m.sessionsRoot, id, ["second version"]);
      const secondBytes = readFileSync(path);
      expect(m.run(["push"]).code).toBe(0);

      const listed = m.run(["generations", id]);
      expect(listed.code, listed.stderr).toBe(0);
      const rows = listed.stdout.trimEnd().split("\n");
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatch(new RegExp(`^\\s+1  \\S+Z\\s+${firstBytes.length} B  3 lines  replaced by 2$`));
      // The current copy is called that, and only that (not "current, replaced").
      expect(rows[1]).toMatch(/^\s+2 .* 2 lines {2}current$/);

      const restored = m.run(["pull", id, "--generation", "1", "--json"]);
      expect(restored.code, restored.stderr).toBe(0);
      const pulled = JSON.parse(restored.stdout) as { path: string; sessionId: string; already: boolean };
      expect(pulled.already).toBe(false);
      expect(pulled.sessionId).not.toBe(id);
      expect(pulled.path.startsWith(join(m.sessionsRoot, piFolderName("/home/dev/commands")))).toBe(true);
      const [header, ...rest] = readFileSync(pulled.path, "utf8").split("\n");
      expect(JSON.parse(header)).toMatchObject({ id: pulled.sessionId, parentSession: `pisync-session:${id}@1` });
      expect(rest.join("\n")).toBe(firstBytes.toString().split("\n").slice(1).join("\n"));
      // Nothing was overwritten: the current file is as it was.
      expect(readFileSync(path).equals(secondBytes)).toBe(true);

      const again = m.run(["pull", id, "--generation", "1"]);
      expect(again.code).toBe(0);
      expect(again.stdout.trim()).toBe(pulled.path);
      expect(again.stderr).toContain("already here");

      const out = join(m.home, "gen1.jsonl");
      expect(m.run(["pull", id, "--generation", "1", "--out", out]).code).toBe(0);
      expect(readFileSync(out).equals(firstBytes)).toBe(true);
      const missing = m.run(["pull", id, "--generation", "9"]);
      expect(missing.code).toBe(4);
      expect(missing.stderr).toContain(`${id} has generations 1 to 2, not 9`);
    });
  }, 60_000);

  it("pull takes the generation the metadata named, even when the session is replaced between its two reads", async () => {
    const id = `race-${Date.now()}`;
    const maker = machine(server.url, server.token);
    let proxy: Awaited<ReturnType<typeof hookedProxy>> | undefined;
    try {
      const path = writeSession(maker.sessionsRoot, id, ["first version"]);
      const firstBytes = readFileSync(path);
      expect(maker.run(["push"]).code).toBe(0);
      writeSession(maker.sessionsRoot, id, ["second version, written elsewhere"]);
      // Another machine's replace lands as the puller asks for the bytes.
      let replaced: { code: number | null; stderr: string } | undefined;
      proxy = await hookedProxy(server.url, async (req) => {
        if (replaced || req.method !== "GET" || !req.url?.startsWith(`/v1/sessions/${id}/raw`)) return;
        replaced = await maker.start(["push"]);
      });
      const puller = machine(proxy.url, server.token);
      try {
        const pulled = await puller.start(["pull", id, "--json"]);
        expect(pulled.code, pulled.stderr).toBe(0);
        expect(replaced?.code, replaced?.stderr).toBe(0);
        const { path: target } = JSON.parse(pulled.stdout) as { path: string };
        // The bytes of generation 1, recorded as generation 1.
        expect(readFileSync(target).equals(firstBytes)).toBe(true);
        expect(pulled.stderr).toContain("generation 1)");
      } finally {
        await puller.cleanup();
      }
    } finally {
      await proxy?.close();
      await maker.cleanup();
    }
  }, 60_000);
});

describe("status on a machine behind the cloud", () => {
  it("says the cloud's current copy is a newer generation from another machine", async () => {
    await onMachine(async (a) => {
      await onMachine(async (b) => {
        const id = `behind-${Date.now()}`;
        const path = writeSession(a.sessionsRoot, id, ["first version", "its answer"]);
        expect(a.run(["push"]).code).toBe(0);
        const pulled = b.run(["pull", id]);
        expect(pulled.code, pulled.stderr).toBe(0);
        // Machine A rewrites its file: the cloud's current copy becomes generation 2, A's.
        writeSession(a.sessionsRoot, id, ["second version"]);
        expect(a.run(["push"]).code).toBe(0);
        expect(readFileSync(path, "utf8")).toContain("second version");

        const onB = b.run(["status"]);
        expect(onB.code, onB.stderr).toBe(0);
        expect(onB.stdout).toMatch(/stored (\S+ \S+) of \1 {2}generation 1\b/);
        expect(onB.stdout).toContain(
          `behind: the cloud's current copy is generation 2, another machine's (pisync generations ${id})`,
        );
        const json = JSON.parse(b.run(["status", "--json"]).stdout) as {
          files: { generation: number; cloudGeneration: number }[];
        };
        expect(json.files).toMatchObject([{ generation: 1, cloudGeneration: 2 }]);
        // Machine A holds the current copy: nothing to say.
        const onA = a.run(["status"]);
        expect(onA.stdout).toContain("generation 2");
        expect(onA.stdout).not.toContain("behind:");
      });
    });
  }, 60_000);
});
