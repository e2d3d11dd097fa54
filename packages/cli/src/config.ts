/** The login: endpoint and token, in a file only its owner can read; env vars override it. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { writeAtomic } from "./files.js";
import { configDir, type Env } from "./paths.js";

export const Login = z.object({
  endpoint: z.url({ protocol: /^https?$/ }),
  token: z.string().check(z.regex(/^pst_[A-Za-z0-9_-]{43}$/, "a pisync token looks like pst_ and 43 characters")),
});
export type Login = z.infer<typeof Login>;

export function configPath(env: Env = process.env): string {
  return join(configDir(env), "config.json");
}

/** The saved login, with PISYNC_ENDPOINT / PISYNC_TOKEN on top; undefined when incomplete. */
export function loadLogin(env: Env = process.env): Login | undefined {
  let saved: Partial<Login> = {};
  try {
    saved = JSON.parse(readFileSync(configPath(env), "utf8"));
  } catch {}
  const login = Login.safeParse({
    endpoint: env.PISYNC_ENDPOINT || saved.endpoint,
    token: env.PISYNC_TOKEN || saved.token,
  });
  return login.success ? { ...login.data, endpoint: login.data.endpoint.replace(/\/+$/, "") } : undefined;
}

export function saveLogin(login: Login, env: Env = process.env): void {
  writeAtomic(configPath(env), `${JSON.stringify(login, null, 2)}\n`, 0o600);
}
