/**
 * `pisync service`: the systemd user unit and the launchd agent, as printed (`--dry-run`, both
 * platforms) and as written into a temp home, checked by systemd's own `systemd-analyze verify`
 * and Python's plist parser where present; what the service manager is asked to do; and
 * `service status` reading what the real watcher last did.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { cliPath, eventually, machine, npmStartForFile } from "@pisync/testing/cli";
import { afterAll, describe, expect, it } from "vitest";
import type { Io } from "../src/commands/common.js";
import { type ServiceHost, service } from "../src/commands/service.js";
import { piFileName, piFolderName } from "../src/paths.js";
import { isControl } from "../src/sanitize.js";

const server = npmStartForFile();
const temp = mkdtempSync(join(tmpdir(), "pisync-service-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Whether `command` runs here at all. */
function has(command: string, args: string[] = ["--version"]): boolean {
  return spawnSync(command, args, { stdio: "ignore" }).error === undefined;
}
const hasSystemdAnalyze = has("systemd-analyze");
const hasPython = has("python3");
/** A systemd user manager reachable from here (a desktop login has one; containers and CI mostly do not). */
const userBus = spawnSync("systemctl", ["--user", "is-system-running"], { encoding: "utf8" });
const hasUserSystemd = !userBus.error && /^(running|degraded|starting|initializing)/.test(userBus.stdout);
const realConfig = join(process.env.HOME ?? homedir(), ".config");
const realUnit = join(realConfig, "systemd", "user", "pisync.service");
const realLogin = join(realConfig, "pisync", "config.json");

/** A host that records what the service manager is asked, answering `answer`. */
function fakeHost(
  platform: NodeJS.Platform,
  answer: (command: string, args: string[]) => { code: number | null; output: string } = () => ({
    code: 0,
    output: "",
  }),
) {
  const calls: string[] = [];
  const host: ServiceHost = {
    platform,
    node: process.execPath,
    script: cliPath,
    uid: 501,
    run(command, args) {
      calls.push([command, ...args].join(" "));
      return answer(command, args);
    },
  };
  return { host, calls };
}

/** An in-process Io over `env`; what the command printed. */
function io(env: NodeJS.ProcessEnv) {
  const printed = { out: "", err: "" };
  const value: Io = {
    out: (t) => {
      printed.out += t;
    },
    err: (t) => {
      printed.err += t;
    },
    env,
    isTTY: false,
  };
  return { io: value, printed };
}

/** Runs the command in process, turning a thrown CliError into its code and message. */
async function run(argv: string[], env: NodeJS.ProcessEnv, host: ServiceHost) {
  const { io: value, printed } = io(env);
  try {
    const code = await service(argv, value, host);
    return { code, ...printed };
  } catch (error) {
    const e = error as { code?: number; message: string };
    return { code: e.code ?? -1, out: printed.out, err: `${printed.err}${e.message}\n` };
  }
}

const home = join(temp, "home dir"); // a space: the unit's quoting must hold it
const env: NodeJS.ProcessEnv = {
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_STATE_HOME: join(home, "state"),
  PI_CODING_AGENT_DIR: join(home, "agent%1"),
  PISYNC_TOKEN: `pst_${"S".repeat(43)}`,
};

describe("--dry-run prints the unit", () => {
  it("Linux: a systemd user unit running pisync watch, restarted on failure, started at login, logged to the journal", async () => {
    const { host, calls } = fakeHost("linux");
    const r = await run(["install", "--dry-run", "--root", "/srv/pi sessions"], env, host);
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      `ExecStart="${process.execPath}" "--max-semi-space-size=1" "${cliPath}" "watch" "--root" "/srv/pi sessions"\n`,
    );
    for (const line of [
      "Restart=on-failure",
      "RestartPreventExitStatus=3",
      "StandardError=journal",
      "WantedBy=default.target",
      `Environment="XDG_CONFIG_HOME=${env.XDG_CONFIG_HOME}"`,
      `Environment="XDG_STATE_HOME=${env.XDG_STATE_HOME}"`,
      // systemd expands %-specifiers: a literal % is written twice.
      `Environment="PI_CODING_AGENT_DIR=${join(home, "agent%%1")}"`,
    ]) {
      expect(r.out).toContain(`${line}\n`);
    }
    expect(r.out).not.toContain("pst_"); // the token stays in the login file
    expect(calls).toEqual([]); // nothing started, nothing written
    expect(existsSync(home)).toBe(false);
  });

  it("macOS: a launchd agent with KeepAlive, run at load, its log in ~/Library/Logs", async () => {
    const { host, calls } = fakeHost("darwin");
    const r = await run(["install", "--dry-run"], { ...env, XDG_STATE_HOME: join(home, "a&b<c>") }, host);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<!DOCTYPE plist/);
    expect(r.out).toContain("<key>Label</key>\n\t<string>dev.pisync.watch</string>");
    expect(r.out).toContain(
      `<key>ProgramArguments</key>\n\t<array>\n\t\t<string>${process.execPath}</string>\n\t\t<string>--max-semi-space-size=1</string>\n\t\t<string>${cliPath}</string>\n\t\t<string>watch</string>\n\t</array>`,
    );
    expect(r.out).toContain("<key>KeepAlive</key>\n\t<true/>");
    expect(r.out).toContain("<key>RunAtLoad</key>\n\t<true/>");
    expect(r.out).toContain(
      `<key>StandardErrorPath</key>\n\t<string>${join(home, "Library/Logs/pisync.log")}</string>`,
    );
    expect(r.out).toContain(`<string>${join(home, "a&amp;b&lt;c&gt;")}</string>`);
    expect(r.out).not.toContain("pst_");
    expect(calls).toEqual([]);
  });

  // Python's plistlib reads Apple's format exactly; without it the text checks above stand alone.
  it.runIf(hasPython)("macOS: the agent is a property list Apple's format reads back to the same values", async () => {
    const { host } = fakeHost("darwin");
    const odd = { ...env, XDG_STATE_HOME: join(home, "a&b<c>\"'") };
    const r = await run(["install", "--dry-run"], odd, host);
    const file = join(temp, "agent.plist");
    writeFileSync(file, r.out);
    const read = spawnSync(
      "python3",
      ["-c", "import json,plistlib,sys; print(json.dumps(plistlib.load(open(sys.argv[1],'rb'))))", file],
      { encoding: "utf8" },
    );
    expect(read.stderr).toBe("");
    expect(JSON.parse(read.stdout)).toMatchObject({
      Label: "dev.pisync.watch",
      ProgramArguments: [process.execPath, "--max-semi-space-size=1", cliPath, "watch"],
      KeepAlive: true,
      RunAtLoad: true,
      EnvironmentVariables: { XDG_STATE_HOME: odd.XDG_STATE_HOME },
    });
  });
});

describe("a value with a control character", () => {
  // The review's value: systemd reads `\r` as a line end, so the rest became an ExecStartPre=.
  const hostile = "/tmp/s dir\rExecStartPre=/usr/bin/touch /tmp/PWNED\r#";

  for (const platform of ["linux", "darwin"] as const) {
    it(`${platform}: install refuses it (exit 2), naming the value with its controls shown, and writes nothing`, async () => {
      const { host, calls } = fakeHost(platform);
      for (const [argv, odd] of [
        [["install"], { ...env, XDG_STATE_HOME: hostile }],
        [["install", "--dry-run"], { ...env, PI_CODING_AGENT_DIR: "/a\nb" }],
        [["install", "--root", "/srv/x\u007fy"], env],
        [["install", "--dry-run", "--root", "/srv/tab\there"], env],
      ] as const) {
        const r = await run([...argv], odd, host);
        expect(r.code).toBe(2);
        expect(r.out).toBe("");
        expect([...r.err].filter((c) => c !== "\n" && isControl(c.charCodeAt(0)))).toEqual([]);
      }
      const r = await run(["install"], { ...env, XDG_STATE_HOME: hostile }, host);
      expect(r.err).toContain("/tmp/s dir\\x0dExecStartPre=/usr/bin/touch /tmp/PWNED\\x0d#");
      expect(calls).toEqual([]);
      expect(existsSync(home)).toBe(false);
    });
  }
});

describe("install and uninstall", () => {
  it("Linux: writes the unit under the temp home's XDG_CONFIG_HOME, then asks systemd to enable and start it", async () => {
    const h = join(temp, "linux-home");
    const e = { ...env, HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    const { host, calls } = fakeHost("linux");
    // No saved login: the service could not log in, so nothing is written.
    const refused = await run(["install"], e, host);
    expect(refused.code).toBe(3);
    expect(refused.err).toContain("run `pisync login");
    mkdirSync(join(h, ".config", "pisync"), { recursive: true });
    writeFileSync(
      join(h, ".config", "pisync", "config.json"),
      JSON.stringify({ endpoint: "http://127.0.0.1:1", token: `pst_${"L".repeat(43)}` }),
    );
    const r = await run(["install"], e, host);
    expect(r.code, r.err).toBe(0);
    const unit = join(h, ".config", "systemd", "user", "pisync.service");
    expect(r.err).toContain(`wrote ${unit}\n`);
    expect(r.err).toContain("journalctl --user -u pisync");
    expect(readFileSync(unit, "utf8")).toContain("Restart=on-failure\n");
    expect(calls).toEqual([
      "systemctl --user daemon-reload",
      "systemctl --user enable pisync.service",
      "systemctl --user restart pisync.service",
    ]);

    const gone = await run(["uninstall"], e, host);
    expect(gone.code).toBe(0);
    expect(existsSync(unit)).toBe(false);
    expect(calls.slice(3)).toEqual(["systemctl --user disable --now pisync.service", "systemctl --user daemon-reload"]);
    expect((await run(["uninstall"], e, host)).err).toContain("not installed");
  });

  it("Linux without a user manager: the unit stays written, and one line says how to start it", async () => {
    const h = join(temp, "busless-home");
    const e = { ...env, HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    mkdirSync(join(h, ".config", "pisync"), { recursive: true });
    writeFileSync(
      join(h, ".config", "pisync", "config.json"),
      JSON.stringify({ endpoint: "http://127.0.0.1:1", token: `pst_${"L".repeat(43)}` }),
    );
    const { host } = fakeHost("linux", () => ({ code: 1, output: "Failed to connect to bus: No medium found" }));
    const r = await run(["install"], e, host);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      "the unit is written but could not be started (systemctl --user daemon-reload: Failed to connect to bus: No medium found): in your login session, run systemctl --user enable --now pisync.service",
    );
    expect(existsSync(join(h, ".config", "systemd", "user", "pisync.service"))).toBe(true);
  });

  it("macOS: writes the agent to ~/Library/LaunchAgents and bootstraps it in the user's GUI domain", async () => {
    const h = join(temp, "mac-home");
    const e = { ...env, HOME: h, XDG_CONFIG_HOME: join(h, ".config") };
    mkdirSync(join(h, ".config", "pisync"), { recursive: true });
    writeFileSync(
      join(h, ".config", "pisync", "config.json"),
      JSON.stringify({ endpoint: "http://127.0.0.1:1", token: `pst_${"L".repeat(43)}` }),
    );
    const { host, calls } = fakeHost("darwin", (_c, args) =>
      args[0] === "print" ? { code: 0, output: "\tstate = running\n" } : { code: 0, output: "" },
    );
    const plist = join(h, "Library", "LaunchAgents", "dev.pisync.watch.plist");
    expect((await run(["install"], e, host)).code).toBe(0);
    expect(readFileSync(plist, "utf8")).toContain("<key>KeepAlive</key>");
    expect(calls).toEqual(["launchctl bootout gui/501/dev.pisync.watch", `launchctl bootstrap gui/501 ${plist}`]);
    expect((await run(["status"], e, host)).out).toContain(`service: installed (${plist}), running\n`);
    expect((await run(["uninstall"], e, host)).code).toBe(0);
    expect(existsSync(plist)).toBe(false);
  });
});

describe("the written unit, checked by systemd", () => {
  // systemd-analyze is systemd's own checker; a machine without systemd cannot run it.
  it.runIf(hasSystemdAnalyze)(
    "`pisync service install --no-start` writes a unit systemd-analyze verify accepts without a warning",
    async () => {
      const m = machine(server.url, server.token);
      try {
        // The real command, as a user runs it: log in, then install.
        expect(m.run(["login", "--endpoint", server.url, "--token", server.token]).code).toBe(0);
        const r = m.run(["service", "install", "--no-start"]);
        expect(r.code, r.stderr).toBe(0);
        const unit = join(m.home, ".config", "systemd", "user", "pisync.service");
        expect(r.stderr).toContain(`wrote ${unit}\n`);
        expect(r.stderr).toContain(
          "not started (--no-start): start it with systemctl --user enable --now pisync.service",
        );
        const verify = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8" });
        expect(verify.stderr).toBe("");
        expect(verify.status).toBe(0);
        // The check does catch a broken unit.
        const broken = join(temp, "pisync.service");
        writeFileSync(broken, readFileSync(unit, "utf8").replace("Restart=on-failure", "Restart=on-flure"));
        expect(spawnSync("systemd-analyze", ["verify", broken], { encoding: "utf8" }).stderr).toContain("on-flure");
      } finally {
        await m.cleanup();
      }
    },
  );

  // A real `systemctl --user` run needs a user manager (a desktop login session: this machine
  // has none when `systemctl --user is-system-running` says offline or cannot reach its bus). It
  // writes the real ~/.config, so it runs only where no pisync unit or login is there already.
  it("installed for real, systemd --user runs the watcher, then uninstall stops it", async (ctx) => {
    // Skipped, saying why, where it cannot run or would touch this user's own pisync.
    const said = userBus.error?.message ?? (userBus.stdout.trim() || "no answer");
    ctx.skip(!hasUserSystemd, `no systemd user manager here (systemctl --user is-system-running: ${said})`);
    ctx.skip(existsSync(realUnit) || existsSync(realLogin), `this user has a pisync unit or login already`);
    const m = machine(server.url, server.token);
    const real = { HOME: process.env.HOME, XDG_CONFIG_HOME: undefined };
    try {
      expect(m.run(["login", "--endpoint", server.url, "--token", server.token], real).code).toBe(0);
      const r = m.run(["service", "install"], real);
      expect(r.code, r.stderr).toBe(0);
      const failure = await eventually(async () =>
        /^active/.test(spawnSync("systemctl", ["--user", "is-active", "pisync.service"], { encoding: "utf8" }).stdout)
          ? undefined
          : "not active",
      );
      expect(failure).toBeUndefined();
      expect(m.run(["service", "uninstall"], real).code).toBe(0);
      expect(existsSync(realUnit)).toBe(false);
    } finally {
      rmSync(realLogin, { force: true });
      await m.cleanup();
    }
  });
});

describe("service status", () => {
  it("shows what the watcher kept of a hostile server's words escaped, in --json too", async () => {
    // A server's error text and a session's path reach the status file as the watcher met them.
    const evil = "\x1b]0;pwned\x07\x1b[31mred\b\r\x7fdel\x9b31m\u202eevil";
    const hostile = { ...env, XDG_STATE_HOME: join(temp, "hostile-state") };
    mkdirSync(join(hostile.XDG_STATE_HOME as string, "pisync"), { recursive: true });
    const event = { time: evil, event: "error", fields: { path: `/s/${evil}.jsonl`, error: evil } };
    const status = {
      pid: 2_147_483_647,
      startedAt: evil,
      endpoint: evil,
      roots: [evil],
      last: event,
      lastError: event,
    };
    writeFileSync(join(hostile.XDG_STATE_HOME as string, "pisync", "watch-status.json"), JSON.stringify(status));
    const raw = (text: string) => [...text].filter((c) => c !== "\n" && isControl(c.charCodeAt(0)));
    const { host } = fakeHost("linux");
    const human = await run(["status"], hostile, host);
    expect(human.code).toBe(0);
    expect(raw(human.out)).toEqual([]);
    expect(human.out).toContain("\\x1b]0;pwned");
    const json = await run(["status", "--json"], hostile, host);
    expect(json.code).toBe(0);
    expect(raw(json.out)).toEqual([]);
    expect(JSON.parse(json.out).watcher).toMatchObject(status); // escaped, not dropped
  });

  it("says whether it is installed and what the watcher last did, running or not", async () => {
    const m = machine(server.url, server.token);
    try {
      const before = m.run(["service", "status"]);
      expect(before.code).toBe(0);
      expect(before.stdout).toContain("service: not installed (pisync service install)\n");
      expect(before.stdout).toContain("watcher: no watcher has run yet");

      const folder = join(m.sessionsRoot, piFolderName("/home/dev/service"));
      mkdirSync(folder, { recursive: true });
      const file = join(folder, piFileName("2026-03-01T00:00:00.000Z", "svc-1"));
      writeFileSync(
        file,
        `${JSON.stringify({ type: "session", version: 3, id: "svc-1", timestamp: "2026-03-01T00:00:00.000Z", cwd: "/home/dev/service" })}\n`,
      );
      const watcher = m.watch();
      const seen = await eventually(async () => {
        const s = m.run(["service", "status", "--json"]);
        const json = JSON.parse(s.stdout) as {
          watcher: { running: boolean; lastSynced?: { fields: { path?: string } } };
        };
        return json.watcher?.running && json.watcher.lastSynced ? undefined : s.stdout;
      }, 30_000);
      expect(seen).toBeUndefined();
      const running = m.run(["service", "status"]);
      expect(running.stdout).toMatch(
        new RegExp(`watcher: running \\(pid ${watcher.child.pid}, since \\S+\\), backing up to ${server.url}\n`),
      );
      expect(running.stdout).toMatch(/ {2}last sent: {2}synced .*svc-1\.jsonl.* at \S+Z\n/);

      watcher.child.kill("SIGTERM");
      await new Promise((r) => watcher.child.once("exit", r));
      const after = m.run(["service", "status"]);
      expect(after.stdout).toMatch(/watcher: not running \(last started \S+, stopped \S+ with exit code 0\)\n/);
    } finally {
      await m.cleanup();
    }
  }, 90_000);
});
