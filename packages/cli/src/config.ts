/** The login: endpoint and token, in a file only its owner can read; env vars override it. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { CliError, EXIT } from "./cli-error.js";
import { writeAtomic } from "./files.js";
import { configDir, type Env } from "./paths.js";

/** What a pisync token looks like (`pst_` and 43 base64url characters). */
export const TOKEN_SHAPE = "a pisync token is pst_ followed by 43 letters, digits, - or _ (e.g. pst_AbC…)";

/** What an endpoint looks like. */
export const ENDPOINT_SHAPE = "the server's address is an http:// or https:// URL, e.g. https://pisync.example.com";

export const Login = z.object({
  endpoint: z.url({ protocol: /^https?$/, error: ENDPOINT_SHAPE }),
  token: z.string().check(z.regex(/^pst_[A-Za-z0-9_-]{43}$/, TOKEN_SHAPE)),
});
export type Login = z.infer<typeof Login>;

export function configPath(env: Env = process.env): string {
  return join(configDir(env), "config.json");
}

/** Endpoint and token as a person may paste them: surrounding spaces dropped, no trailing `/`. */
export function tidyLogin(login: { endpoint?: string; token?: string }): { endpoint?: string; token?: string } {
  return { endpoint: login.endpoint?.trim().replace(/\/+$/, ""), token: login.token?.trim() };
}

/**
 * The login in effect, or why there is none: PISYNC_ENDPOINT / PISYNC_TOKEN on top of the
 * saved login. A malformed variable is named as such (it hides the saved login).
 */
export function resolveLogin(env: Env = process.env): { login: Login } | { problem: string } {
  let saved: { endpoint?: string; token?: string } = {};
  try {
    saved = tidyLogin(JSON.parse(readFileSync(configPath(env), "utf8")));
  } catch {}
  const fromEnv = tidyLogin({ endpoint: env.PISYNC_ENDPOINT || undefined, token: env.PISYNC_TOKEN || undefined });
  if (fromEnv.token !== undefined && !Login.shape.token.safeParse(fromEnv.token).success) {
    return { problem: `PISYNC_TOKEN is malformed: ${TOKEN_SHAPE}; unset it to use the saved login` };
  }
  if (fromEnv.endpoint !== undefined && !Login.shape.endpoint.safeParse(fromEnv.endpoint).success) {
    return { problem: `PISYNC_ENDPOINT is malformed: ${ENDPOINT_SHAPE}` };
  }
  const login = Login.safeParse({ endpoint: fromEnv.endpoint ?? saved.endpoint, token: fromEnv.token ?? saved.token });
  if (login.success) return { login: login.data };
  return {
    problem: "not logged in: run `pisync login --endpoint URL --token TOKEN` (or set PISYNC_ENDPOINT and PISYNC_TOKEN)",
  };
}

/** The saved login, with PISYNC_ENDPOINT / PISYNC_TOKEN on top; undefined when incomplete or malformed. */
export function loadLogin(env: Env = process.env): Login | undefined {
  const resolved = resolveLogin(env);
  return "login" in resolved ? resolved.login : undefined;
}

export function saveLogin(login: Login, env: Env = process.env): void {
  writeAtomic(configPath(env), `${JSON.stringify(login, null, 2)}\n`, 0o600);
}

/** What a request deadline looks like. */
export const TIMEOUT_SHAPE =
  "--timeout (or PISYNC_TIMEOUT) is a number of seconds from 0.1 to 86400, e.g. --timeout 300";

const Timeout = z
  .pipe(z.string().check(z.regex(/^\d{1,5}(\.\d{1,3})?$/, TIMEOUT_SHAPE)), z.transform(Number))
  .check(z.refine((s) => s >= 0.1 && s <= 86400, TIMEOUT_SHAPE));

/**
 * The overall deadline of one request, in ms, from PISYNC_TIMEOUT (seconds; `--timeout` sets
 * it for one command); undefined when unset (the client's default then).
 * @throws CliError (exit 2) when it is malformed
 */
export function requestTimeoutMs(env: Env = process.env): number | undefined {
  const value = env.PISYNC_TIMEOUT?.trim();
  if (!value) return undefined;
  const parsed = Timeout.safeParse(value);
  if (!parsed.success) throw new CliError(TIMEOUT_SHAPE, EXIT.usage);
  return Math.round(parsed.data * 1000);
}

/** What the merge setting looks like. */
export const MERGE_SHAPE =
  "PISYNC_MERGE is on or off (off: a session continued on two machines becomes a new generation)";

const MergeSetting = z.enum(["on", "off"], MERGE_SHAPE);

/**
 * Whether copies of a session continued on two machines are merged by entry id: on unless
 * `--no-merge` or PISYNC_MERGE=off.
 * @throws CliError (exit 2) when PISYNC_MERGE is neither on nor off
 */
export function mergeEnabled(env: Env = process.env, noMerge = false): boolean {
  if (noMerge) return false;
  const value = env.PISYNC_MERGE?.trim().toLowerCase();
  if (!value) return true;
  const parsed = MergeSetting.safeParse(value);
  if (!parsed.success) throw new CliError(MERGE_SHAPE, EXIT.usage);
  return parsed.data === "on";
}
