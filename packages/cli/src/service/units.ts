/**
 * The watcher as a service: the systemd user unit (Linux) and the launchd agent (macOS) that run
 * `pisync watch` at login, restart it when it fails, and send its log to the system's log.
 * Pure text: `pisync service` writes these, tests read them.
 */
import { CliError, EXIT } from "../cli-error.js";
import { replaceControls } from "../sanitize.js";

/** What the service runs, and the environment it needs to find the same login and sessions. */
export interface ServiceSpec {
  /** The program and its arguments: node, its flags, the pisync bundle, `watch`, its options. */
  argv: string[];
  /** Variables the watcher reads (XDG folders, pi's folders) when they differ from the defaults. */
  env: Record<string, string>;
  /** Where launchd writes the watcher's log (systemd sends it to the journal). */
  logFile?: string;
}

/** The unit's file name under `~/.config/systemd/user/`. */
export const SYSTEMD_UNIT = "pisync.service";
/** The agent's label, and its file name under `~/Library/LaunchAgents/` with `.plist`. */
export const LAUNCHD_LABEL = "dev.pisync.watch";

/** The variables passed on to the service when set: where the login, the state and pi's sessions are. */
export const SERVICE_ENV = [
  "XDG_CONFIG_HOME",
  "XDG_STATE_HOME",
  "PI_CODING_AGENT_DIR",
  "PI_CODING_AGENT_SESSION_DIR",
] as const;

/** C0 controls (`\r`, `\n`, tab…) and DEL: a unit line ends at `\r` or `\n`, and a plist cannot hold C0. */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Refuses a value a unit cannot hold as written: a control character would end the line (systemd
 * reads `\r` as a line end: what follows becomes a directive of its own) or break the plist.
 * The value is named with its controls escaped (exit 2: fix the folder or variable and retry).
 */
export function assertUnitValues(spec: ServiceSpec): void {
  const values = [...spec.argv, ...Object.entries(spec.env).flat(), ...(spec.logFile ? [spec.logFile] : [])];
  for (const value of values) {
    if (!hasControl(value)) continue;
    const shown = replaceControls(value, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
    throw new CliError(
      `a service cannot hold a control character (line break, tab…): "${shown}"; use a folder or value without one`,
      EXIT.usage,
    );
  }
}

/** One word of a systemd command line or assignment: quoted, `\` and `"` escaped, `%` doubled (specifiers). */
function systemdQuote(word: string): string {
  return `"${word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%")}"`;
}

/** The systemd user unit: started at login (default.target), restarted on failure, logged to the journal. */
export function systemdUnit(spec: ServiceSpec): string {
  assertUnitValues(spec);
  const env = Object.entries(spec.env).map(([k, v]) => `Environment=${systemdQuote(`${k}=${v}`)}\n`);
  return `[Unit]
Description=pisync: back up pi sessions as they are written

[Service]
Type=simple
ExecStart=${spec.argv.map(systemdQuote).join(" ")}
${env.join("")}Restart=on-failure
RestartSec=10
# Exit 3 is a refused or missing login: restarting cannot help until you log in again.
RestartPreventExitStatus=3
StandardOutput=journal
StandardError=journal

[Install]
WantedBy=default.target
`;
}

function xml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The launchd agent: run at load (login), kept alive, its output appended to `logFile`. */
export function launchdPlist(spec: ServiceSpec): string {
  assertUnitValues(spec);
  const strings = (values: string[]) => values.map((v) => `\t\t<string>${xml(v)}</string>\n`).join("");
  const env = Object.entries(spec.env)
    .map(([k, v]) => `\t\t<key>${xml(k)}</key>\n\t\t<string>${xml(v)}</string>\n`)
    .join("");
  const log = spec.logFile
    ? `\t<key>StandardOutPath</key>\n\t<string>${xml(spec.logFile)}</string>\n\t<key>StandardErrorPath</key>\n\t<string>${xml(spec.logFile)}</string>\n`
    : "";
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
\t<key>Label</key>
\t<string>${LAUNCHD_LABEL}</string>
\t<key>ProgramArguments</key>
\t<array>
${strings(spec.argv)}\t</array>
${env ? `\t<key>EnvironmentVariables</key>\n\t<dict>\n${env}\t</dict>\n` : ""}\t<key>RunAtLoad</key>
\t<true/>
\t<key>KeepAlive</key>
\t<true/>
\t<key>ThrottleInterval</key>
\t<integer>10</integer>
\t<key>ProcessType</key>
\t<string>Background</string>
${log}</dict>
</plist>
`;
}
