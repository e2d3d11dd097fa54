/** `open`: the library in a browser, signed in by a one-time link (no password). */
import { spawn } from "node:child_process";
import { isSessionId } from "@pisync/protocol";
import * as z from "zod/mini";
import { type Api, ApiError } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { api, type CommandHelp, type Io, parse } from "./common.js";

const OPEN_HELP: CommandHelp = {
  usage: "pisync open [ID|QUERY] [--print]",
  args: ["ID|QUERY"],
  help: `Opens your library in the browser, signed in. The server gives a one-time link (it works
once, within 60 seconds); opening it signs this browser in until you sign out or leave it
unused for 30 days. With a session id you have, it opens that session; with anything else,
a search for it; with nothing, the list of sessions.

The browser is $BROWSER when set, else xdg-open (Linux), open (macOS) or start (Windows).
When it fails (no browser installed, a headless machine) or cannot confirm within 3 seconds
that it opened the page, the link is printed instead, to open by hand.

  --print    print the link instead of opening it (to open it on another device, say)

examples:
  pisync open
  pisync open 0196a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b
  pisync open 'retry "S3 bucket"'
  pisync open --print | ssh laptop xargs open`,
};

const Args = z.object({
  print: z.optional(z.boolean()),
  positionals: z.union([
    z.tuple([]),
    z.tuple([z.string().check(z.minLength(1, "a session id or a search, e.g. pisync open 'retry S3'"))]),
  ]),
});

/** A one-time sign-in link, and the page it lands on. */
export interface LibraryLink {
  url: string;
  expiresAt: string;
  /** The path the browser lands on (`/`, `/sessions/<id>`, `/?q=…`). */
  next: string;
}

/** Where `target` should land: the session when the user has one with that id, else a search, else the list. */
async function landingOf(client: Api, target: string | undefined): Promise<string> {
  if (!target) return "/";
  if (isSessionId(target)) {
    try {
      await client.json(`/v1/sessions/${encodeURIComponent(target)}`);
      return `/sessions/${encodeURIComponent(target)}`;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }
  return `/?q=${encodeURIComponent(target)}`;
}

/**
 * Asks the server for a one-time sign-in link to the library: to session `target` when the
 * user has it, else to a search for `target`, else to the list (the pi package calls this too).
 */
export async function libraryLink(client: Api, target?: string): Promise<LibraryLink> {
  const next = await landingOf(client, target);
  const link = await client.postJson<{ url: string; expiresAt: string }>("/v1/login-links", { next });
  return { ...link, url: checkedLoginUrl(link.url), next };
}

/** A sign-in link as servers make it: http(s), a plain host, `/login/psl_…`, nothing else. */
const LOGIN_URL = /^https?:\/\/(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?\/login\/psl_[A-Za-z0-9_-]{43}$/;

/**
 * The server's link, refused unless it has the shape of a sign-in link: it becomes an argument
 * of the browser opener (on Windows, `cmd /c start`, which reads `&`, `|` and `^` as commands),
 * so a server, or whatever answers in its place, must not choose what runs here.
 * @throws CliError when it has another shape
 */
export function checkedLoginUrl(url: unknown): string {
  if (typeof url === "string" && LOGIN_URL.test(url)) return url;
  throw new CliError("the server's answer is not a sign-in link: nothing was opened");
}

/** The command that opens a URL here: `$BROWSER`, else the platform's opener. */
export function openerFor(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): { command: string; args: string[] } {
  // $BROWSER may list several, colon-separated (the first is used) and may say where the URL goes (%s).
  const browser = env.BROWSER?.split(":")[0]?.trim();
  if (browser) {
    const [command, ...rest] = browser.split(/\s+/);
    return { command: command as string, args: rest.some((a) => a.includes("%s")) ? rest : [...rest, "%s"] };
  }
  if (platform === "darwin") return { command: "open", args: ["%s"] };
  if (platform === "win32") return { command: "cmd", args: ["/c", "start", '""', "%s"] };
  return { command: "xdg-open", args: ["%s"] };
}

/** What became of a URL handed to the opener. */
export type OpenOutcome =
  /** The opener exited 0: it handed the URL to a browser. */
  | "opened"
  /** No such program, or it exited non-zero (xdg-open with no browser installed). */
  | "failed"
  /** Still running when we stopped waiting (a browser started directly): maybe opened, maybe not. */
  | "unconfirmed";

/** How long the opener gets to say whether it opened the URL (xdg-open and open answer at once). */
export const OPENER_WAIT_MS = 3000;

/**
 * Hands `url` to the opener (no shell: the URL is one argument) and waits up to `waitMs` for its
 * verdict; an opener still running then is left running on its own.
 */
export function openUrlOutcome(
  url: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
  waitMs = OPENER_WAIT_MS,
): Promise<OpenOutcome> {
  const { command, args } = openerFor(env, platform);
  return new Promise((resolve) => {
    const child = spawn(
      command,
      args.map((a) => a.replaceAll("%s", url)),
      { detached: true, stdio: "ignore", env },
    );
    const timer = setTimeout(() => {
      child.unref();
      resolve("unconfirmed");
    }, waitMs);
    const settle = (outcome: OpenOutcome) => {
      clearTimeout(timer);
      resolve(outcome);
    };
    child.once("error", () => settle("failed"));
    child.once("exit", (code) => settle(code === 0 ? "opened" : "failed"));
  });
}

/** Opens `url` with the opener; true only when the opener confirmed it (exited 0). */
export async function openUrl(
  url: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): Promise<boolean> {
  return (await openUrlOutcome(url, env, platform)) === "opened";
}

/**
 * Opens the library (or prints its link) signed in. The link is printed whenever the opener
 * fails or cannot be confirmed; the exit code is non-zero only when it could neither open nor print.
 */
export async function open(argv: string[], io: Io): Promise<number> {
  const args = parse(argv, { print: { type: "boolean" } }, Args, OPEN_HELP);
  const link = await libraryLink(api(io), args.positionals[0]);
  const outcome = args.print ? "printed" : await openUrlOutcome(link.url, io.env);
  if (outcome === "opened") {
    io.err(`opened ${link.next} in your browser (the link works once, for 60 seconds)\n`);
    return EXIT.ok;
  }
  const { command } = openerFor(io.env, process.platform);
  if (outcome === "failed") {
    io.err(`could not open a browser with ${command} (set $BROWSER): open this link within 60 seconds, once:\n`);
  } else if (outcome === "unconfirmed") {
    io.err(`asked ${command} to open ${link.next}; if no browser shows it, open this link within 60 seconds, once:\n`);
  }
  try {
    io.out(`${link.url}\n`);
  } catch {
    // Neither opened (for sure) nor printed: the link is lost, and the exit code says so.
    return outcome === "unconfirmed" ? EXIT.ok : EXIT.failed;
  }
  return EXIT.ok;
}
