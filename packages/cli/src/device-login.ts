/**
 * `pisync login --endpoint URL` without a token: the machine is signed in from a browser, as
 * `gh auth login` does it (RFC 8628's device authorization). The server gives a short code and
 * a page; the person approves the code there, signed in to their library; this command polls
 * until the server hands over a new token of theirs, named after this machine's host name, and
 * saves the login. The token never passes through the command line, the shell history or `ps`.
 */
import { fstatSync } from "node:fs";
import { hostname } from "node:os";
import { DeviceCode, DeviceToken, ErrorBody } from "@pisync/protocol";
import { Api, Transient } from "./api.js";
import { CliError, EXIT } from "./cli-error.js";
import type { Io } from "./commands/common.js";
import { openerFor, openUrlOutcome } from "./commands/open.js";
import { configPath, saveLogin } from "./config.js";
import { sanitize } from "./sanitize.js";

/** The approval page's link as servers make it: http(s), a plain host, `/device?code=XXXX-XXXX`. */
const DEVICE_URL =
  /^https?:\/\/(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?\/device\?code=[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;
/** Polls never come closer than this, whatever a server says. */
const MIN_INTERVAL_S = 1;
/** Nor wait longer than this between two. */
const MAX_INTERVAL_S = 60;

export interface DeviceLoginOptions {
  /** Waits between polls (tests pass a faster clock; the server still enforces its interval). */
  sleep?: (ms: number) => Promise<void>;
  /** This machine's name (default: its host name). */
  name?: string;
  platform?: NodeJS.Platform;
}

/**
 * Whether something is piped into standard input (a pipe, a file, a socket), as opposed to a
 * terminal or nothing (`/dev/null`): only then is the token read from it instead.
 */
export function stdinPiped(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isFile() || stat.isSocket();
  } catch {
    return false;
  }
}

/** Whether a browser can be opened here without taking over the terminal. */
function browserAvailable(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): boolean {
  if (env.BROWSER?.trim()) return true;
  if (platform === "darwin" || platform === "win32") return true;
  // Without a display, xdg-open falls back to a text browser in this very terminal.
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/** The server's error code of a refused poll, if it sent one. */
function codeOf(body: Buffer): { code?: string; interval?: number } {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(body.toString("utf8")));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

/**
 * Signs this machine in through the browser and saves the login; exits 0 once approved, 3 when
 * denied or expired, 1 when the server cannot be reached.
 */
export async function deviceLogin(endpoint: string, io: Io, options: DeviceLoginOptions = {}): Promise<number> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const platform = options.platform ?? process.platform;
  // No token yet: every request of this flow goes without one.
  const api = new Api({ endpoint, token: "" }, { attempts: 3 });
  const post = async (path: string, body: unknown) => {
    try {
      return await api.request("POST", path, {
        bearer: false,
        headers: { "Content-Type": "application/json" },
        body: Buffer.from(JSON.stringify(body)),
      });
    } catch (error) {
      if (error instanceof Transient) throw new CliError(`could not reach pisync at ${endpoint}: ${error.message}`);
      throw error;
    }
  };

  const started = await post("/v1/device/code", { name: options.name ?? hostname() });
  if (started.status === 404) {
    throw new CliError(
      `the server at ${endpoint} cannot sign machines in from the browser (an older pisync): use --token`,
    );
  }
  const parsed = started.status === 200 ? DeviceCode.safeParse(JSON.parse(started.body.toString("utf8"))) : undefined;
  if (!parsed?.success || !DEVICE_URL.test(parsed.data.verification_uri_complete)) {
    throw new CliError(`the server at ${endpoint} did not answer as pisync does (HTTP ${started.status})`);
  }
  const code = parsed.data;
  const minutes = Math.round(code.expires_in / 60);
  io.err(
    `First copy your one-time code: ${code.user_code}\n` +
      `Then approve it in your library, signed in: ${sanitize(code.verification_uri_complete)}\n`,
  );
  if (browserAvailable(io.env, platform)) {
    const outcome = await openUrlOutcome(code.verification_uri_complete, io.env, platform);
    if (outcome === "opened") io.err("Opened that page in your browser.\n");
    else if (outcome === "failed") {
      io.err(`Could not open a browser with ${openerFor(io.env, platform).command}: open the page by hand.\n`);
    }
  }
  io.err(`Waiting for the approval (the code works for ${minutes} minutes)…\n`);

  let interval = Math.min(Math.max(code.interval, MIN_INTERVAL_S), MAX_INTERVAL_S);
  const deadline = Date.now() + code.expires_in * 1000;
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const response = await post("/v1/device/token", { device_code: code.device_code });
    if (response.status === 200) {
      const got = DeviceToken.safeParse(JSON.parse(response.body.toString("utf8")));
      if (!got.success) throw new CliError("the server's response carried no token");
      saveLogin({ endpoint, token: got.data.token }, io.env);
      io.err(
        `Approved: logged in to ${endpoint} as "${sanitize(got.data.name)}" (rename it with pisync device rename NAME); saved in ${configPath(io.env)}\n`,
      );
      return EXIT.ok;
    }
    const refusal = codeOf(response.body);
    if (refusal.code === "authorization_pending" || refusal.code === "slow_down") {
      if (refusal.interval) interval = Math.min(Math.max(refusal.interval, MIN_INTERVAL_S), MAX_INTERVAL_S);
      continue;
    }
    if (refusal.code === "access_denied")
      throw new CliError("the sign-in was denied in the browser: nothing saved", EXIT.auth);
    if (refusal.code === "expired_token") break;
    throw new CliError(
      `the server refused the sign-in (HTTP ${response.status}${refusal.code ? `, ${refusal.code}` : ""})`,
    );
  }
  throw new CliError(
    `the code expired before it was approved: run pisync login --endpoint ${endpoint} again`,
    EXIT.auth,
  );
}
