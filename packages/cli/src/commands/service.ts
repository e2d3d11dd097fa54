/** `service install | uninstall | status`: `pisync watch` run by the system at login, restarted on failure. */
import { spawnSync } from "node:child_process";
import { existsSync, realpathSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import * as z from "zod/mini";
import { CliError, EXIT } from "../cli-error.js";
import { resolveLogin } from "../config.js";
import { writeAtomic } from "../files.js";
import { safeJson, sanitize } from "../sanitize.js";
import {
  LAUNCHD_LABEL,
  launchdPlist,
  SERVICE_ENV,
  type ServiceSpec,
  SYSTEMD_UNIT,
  systemdUnit,
} from "../service/units.js";
import { isRunning, readWatchStatus, type StatusEvent, watchStatusPath } from "../watch-status.js";
import { type CommandHelp, type Io, parse } from "./common.js";

const HELP: CommandHelp = {
  usage: "pisync service install|uninstall|status [--dry-run] [--no-start] [--root DIR]... [--json]",
  args: ["install|uninstall|status"],
  help: `Runs \`pisync watch\` as a service of your user: started at login, restarted when it
fails, with the login you saved with \`pisync login\` (the token stays in that file, never in
the service's). On Linux a systemd user unit (~/.config/systemd/user/pisync.service, its log
in the journal: journalctl --user -u pisync); on macOS a launchd agent
(~/Library/LaunchAgents/${LAUNCHD_LABEL}.plist, KeepAlive, its log in ~/Library/Logs/pisync.log).

  install      write the unit and start it (again, after an update of pisync)
  uninstall    stop it and remove the unit
  status       whether it is installed and running, and what the watcher last did

  --dry-run    install: print the unit instead of writing it
  --no-start   install: write the unit, enable nothing, start nothing
  --root DIR   install: the folders the watcher follows (repeatable; default: pi's)
  --json       status: one JSON document

examples:
  pisync service install --dry-run
  pisync service install
  pisync service status`,
};

const Args = z.object({
  "dry-run": z.optional(z.boolean()),
  "no-start": z.optional(z.boolean()),
  json: z.optional(z.boolean()),
  root: z.optional(z.array(z.string().check(z.minLength(1, "a folder, e.g. --root ~/.pi/agent/sessions")))),
  positionals: z.tuple([
    z.enum(["install", "uninstall", "status"], {
      error: "one of install, uninstall, status (e.g. pisync service status)",
    }),
  ]),
});

/** What the service command runs on: the platform, this pisync, and the service manager. */
export interface ServiceHost {
  platform: NodeJS.Platform;
  /** The Node that runs pisync, and pisync's own file (the bundle). */
  node: string;
  script: string;
  uid: number;
  /** Runs a service manager's command (systemctl, launchctl): its exit code and output. */
  run(command: string, args: string[]): { code: number | null; output: string };
}

export const defaultHost: ServiceHost = {
  platform: process.platform,
  node: process.execPath,
  get script() {
    return realpathSync(process.argv[1] ?? "pisync");
  },
  uid: process.getuid?.() ?? 0,
  run(command, args) {
    const r = spawnSync(command, args, { encoding: "utf8", timeout: 30_000 });
    if (r.error) return { code: null, output: r.error.message };
    return { code: r.status, output: `${r.stdout}${r.stderr}`.trim() };
  },
};

type Platform = "systemd" | "launchd";

function platformOf(host: ServiceHost): Platform {
  if (host.platform === "linux") return "systemd";
  if (host.platform === "darwin") return "launchd";
  throw new CliError(`pisync service runs on Linux (systemd) and macOS (launchd), not on ${host.platform}`);
}

/** Where the unit goes: systemd reads user units from $XDG_CONFIG_HOME/systemd/user. */
export function unitPath(platform: Platform, env: NodeJS.ProcessEnv): string {
  const home = env.HOME || homedir();
  return platform === "systemd"
    ? join(env.XDG_CONFIG_HOME || join(home, ".config"), "systemd", "user", SYSTEMD_UNIT)
    : join(home, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
}

/** The unit's text for this machine: `pisync watch` by absolute paths, the variables that find the same login. */
export function unitText(platform: Platform, host: ServiceHost, env: NodeJS.ProcessEnv, roots: string[]): string {
  const passed = Object.fromEntries(SERVICE_ENV.flatMap((k) => (env[k] ? [[k, env[k] as string]] : [])));
  const spec: ServiceSpec = {
    argv: [host.node, "--max-semi-space-size=1", host.script, "watch", ...roots.flatMap((r) => ["--root", resolve(r)])],
    env: passed,
    logFile: join(env.HOME || homedir(), "Library", "Logs", "pisync.log"),
  };
  return platform === "systemd" ? systemdUnit(spec) : launchdPlist(spec);
}

/** The command that starts the written unit by hand. */
function startHint(platform: Platform, host: ServiceHost, path: string): string {
  return platform === "systemd"
    ? `systemctl --user enable --now ${SYSTEMD_UNIT}`
    : `launchctl bootstrap gui/${host.uid} ${path}`;
}

/** The first line of a manager's output, for a one-line message. */
const firstLine = (text: string) => sanitize(text.split("\n")[0] ?? "") || "no output";

/** Starts (or restarts) the installed unit; the problem in one line when the manager refused. */
function activate(platform: Platform, host: ServiceHost, path: string): string | undefined {
  if (platform === "systemd") {
    const reload = host.run("systemctl", ["--user", "daemon-reload"]);
    if (reload.code !== 0) return `systemctl --user daemon-reload: ${firstLine(reload.output)}`;
    const enable = host.run("systemctl", ["--user", "enable", SYSTEMD_UNIT]);
    if (enable.code !== 0) return `systemctl --user enable: ${firstLine(enable.output)}`;
    const start = host.run("systemctl", ["--user", "restart", SYSTEMD_UNIT]);
    return start.code === 0 ? undefined : `systemctl --user restart: ${firstLine(start.output)}`;
  }
  const domain = `gui/${host.uid}`;
  host.run("launchctl", ["bootout", `${domain}/${LAUNCHD_LABEL}`]); // not loaded yet is fine
  const boot = host.run("launchctl", ["bootstrap", domain, path]);
  return boot.code === 0 ? undefined : `launchctl bootstrap: ${firstLine(boot.output)}`;
}

function install(platform: Platform, host: ServiceHost, io: Io, args: z.infer<typeof Args>): number {
  const text = unitText(platform, host, io.env, args.root ?? []);
  if (args["dry-run"]) {
    io.out(text);
    return EXIT.ok;
  }
  // The service has none of this shell's variables: it must find a saved login.
  const saved = resolveLogin({ ...io.env, PISYNC_ENDPOINT: undefined, PISYNC_TOKEN: undefined });
  if ("problem" in saved) {
    throw new CliError(
      "the service reads the saved login, and there is none: run `pisync login --endpoint URL --token TOKEN` first",
      EXIT.auth,
    );
  }
  const path = unitPath(platform, io.env);
  writeAtomic(path, text, 0o644);
  io.err(`wrote ${path}\n`);
  if (args["no-start"]) {
    io.err(`not started (--no-start): start it with ${startHint(platform, host, path)}\n`);
    return EXIT.ok;
  }
  const problem = activate(platform, host, path);
  if (problem) {
    throw new CliError(
      `the unit is written but could not be started (${problem}): in your login session, run ${startHint(platform, host, path)}`,
    );
  }
  io.err(
    platform === "systemd"
      ? `started: pisync watch runs now and at every login (logs: journalctl --user -u pisync)\n`
      : `started: pisync watch runs now and at every login (logs: ~/Library/Logs/pisync.log)\n`,
  );
  return EXIT.ok;
}

function uninstall(platform: Platform, host: ServiceHost, io: Io): number {
  const path = unitPath(platform, io.env);
  if (!existsSync(path)) {
    io.err(`not installed (no ${path})\n`);
    return EXIT.ok;
  }
  const stopped =
    platform === "systemd"
      ? host.run("systemctl", ["--user", "disable", "--now", SYSTEMD_UNIT])
      : host.run("launchctl", ["bootout", `gui/${host.uid}/${LAUNCHD_LABEL}`]);
  rmSync(path, { force: true });
  if (platform === "systemd") host.run("systemctl", ["--user", "daemon-reload"]);
  io.err(`removed ${path}${stopped.code === 0 ? " and stopped the service" : ""}\n`);
  return EXIT.ok;
}

/** What the service manager says of the unit: `active`, `inactive`, … or why it cannot tell. */
function managerState(platform: Platform, host: ServiceHost): string {
  if (platform === "systemd") {
    const r = host.run("systemctl", ["--user", "is-active", SYSTEMD_UNIT]);
    const said = firstLine(r.output);
    return /^[a-z-]+$/.test(said) ? said : `unknown (systemctl --user: ${said})`;
  }
  const r = host.run("launchctl", ["print", `gui/${host.uid}/${LAUNCHD_LABEL}`]);
  if (r.code !== 0) return "not loaded";
  return /state = (\w+)/.exec(r.output)?.[1] ?? "loaded";
}

function describeEvent(e: StatusEvent | undefined): string {
  if (!e) return "nothing yet";
  const fields = Object.entries(e.fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  return sanitize(`${e.event}${fields ? ` ${fields}` : ""} at ${e.time}`);
}

function status(platform: Platform, host: ServiceHost, io: Io, json: boolean): number {
  const path = unitPath(platform, io.env);
  const installed = existsSync(path);
  const manager = installed ? managerState(platform, host) : "not installed";
  const watch = readWatchStatus(io.env);
  const running = Boolean(watch && !watch.stoppedAt && isRunning(watch.pid));
  if (json) {
    io.out(`${safeJson({ installed, unit: path, manager, watcher: watch ? { ...watch, running } : null }, 2)}\n`);
    return EXIT.ok;
  }
  io.out(
    installed ? `service: installed (${path}), ${manager}\n` : `service: not installed (pisync service install)\n`,
  );
  if (!watch) {
    io.out(`watcher: no watcher has run yet (nothing in ${watchStatusPath(io.env)})\n`);
    return EXIT.ok;
  }
  // The file is only as trustworthy as whatever wrote it: every field goes through the sanitiser.
  io.out(
    `${sanitize(
      running
        ? `watcher: running (pid ${watch.pid}, since ${watch.startedAt}), backing up to ${watch.endpoint}`
        : `watcher: not running (last started ${watch.startedAt}${watch.stoppedAt ? `, stopped ${watch.stoppedAt} with exit code ${watch.exitCode}` : ", ended without a word"})`,
    )}\n`,
  );
  io.out(`  last event: ${describeEvent(watch.last)}\n`);
  io.out(`  last sent:  ${describeEvent(watch.lastSynced)}\n`);
  if (watch.lastError) io.out(`  last error: ${describeEvent(watch.lastError)}\n`);
  if (watch.serverChanged) io.out(`  new server: ${describeEvent(watch.serverChanged)} (its files sent again)\n`);
  return EXIT.ok;
}

/** `pisync service install|uninstall|status`. */
export async function service(argv: string[], io: Io, host: ServiceHost = defaultHost): Promise<number> {
  const args = parse(
    argv,
    {
      "dry-run": { type: "boolean" },
      "no-start": { type: "boolean" },
      json: { type: "boolean" },
      root: { type: "string", multiple: true },
    },
    Args,
    HELP,
  );
  const platform = platformOf(host);
  const [action] = args.positionals;
  if (action === "install") return install(platform, host, io, args);
  if (action === "uninstall") return uninstall(platform, host, io);
  return status(platform, host, io, args.json ?? false);
}
