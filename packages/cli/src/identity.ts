/**
 * Which server and account a machine talks to. What a machine confirmed (its `StateStore`) is
 * kept per server identity (an id the server keeps with its data) and account, never per
 * address: another account on the same server, or a server started afresh at the same address
 * (its data gone), starts from nothing confirmed, so `push` asks it what it holds and sends the
 * rest, and `status` never calls a file stored there on the strength of another server's word.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { type Api, ApiError } from "./api.js";
import { writeAtomic } from "./files.js";
import { type Env, stateDir } from "./paths.js";
import { StateStore } from "./state.js";

/** `GET /v1/whoami`: the account, this token's device, and the id of the server's data. */
export const Identity = z.object({
  user: z.string(),
  device: z.object({ id: z.string(), name: z.string() }),
  server: z.object({ id: z.string() }),
});
export type Identity = z.infer<typeof Identity>;

/**
 * Who the token is on this server; undefined from a server without `/v1/whoami` (an older
 * one: what was confirmed is then kept by address, as it was). Throws `Unauthorized` for a
 * refused token and `Transient` when the server cannot be reached.
 */
export async function whoami(api: Api): Promise<Identity | undefined> {
  try {
    const response = Identity.safeParse(await api.json("/v1/whoami"));
    return response.success ? response.data : undefined;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}

/** The scope of a state file: the server's data and the account (or, for an older server, its address). */
export function scopeOf(identity: Identity | undefined, endpoint: string): string {
  return identity ? `server ${identity.server.id} user ${identity.user}` : endpoint;
}

function identitiesPath(env: Env): string {
  return join(stateDir(env), "identities.json");
}

const Remembered = z.record(z.string(), Identity);

function readRemembered(env: Env): Record<string, Identity> {
  try {
    const parsed = Remembered.safeParse(JSON.parse(readFileSync(identitiesPath(env), "utf8")));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

/** The identity this machine last saw at an address (for a view of what it last knew while offline). */
export function lastIdentity(endpoint: string, env: Env = process.env): Identity | undefined {
  return readRemembered(env)[endpoint];
}

/** Remembers the identity seen at an address. */
export function rememberIdentity(endpoint: string, identity: Identity, env: Env = process.env): void {
  const all = readRemembered(env);
  const known = all[endpoint];
  if (known && JSON.stringify(known) === JSON.stringify(identity)) return;
  writeAtomic(identitiesPath(env), JSON.stringify({ ...all, [endpoint]: identity }, null, 2));
}

/** Whether two identities are one server's data and one account (the device may differ). */
export function sameScope(a: Identity | undefined, b: Identity | undefined): boolean {
  return a !== undefined && b !== undefined && a.server.id === b.server.id && a.user === b.user;
}

/** What `confirmedState` found. */
export interface Confirmed {
  state: StateStore;
  /** Who the token is now; undefined from an older server. */
  identity: Identity | undefined;
  /** The identity last seen at this address when it was another server or account. */
  previous: Identity | undefined;
}

/**
 * What this machine confirmed with the server and account the token reaches now (asked with
 * `GET /v1/whoami`). A command that backs up remembers it as the one this address last had
 * (`remember`); one that only looks (`status`) does not. Throws as `whoami` does.
 */
export async function confirmedState(
  api: Api,
  env: Env = process.env,
  options: { remember?: boolean } = {},
): Promise<Confirmed> {
  const { endpoint } = api.login;
  const identity = await whoami(api);
  const last = lastIdentity(endpoint, env);
  if (identity && options.remember !== false) rememberIdentity(endpoint, identity, env);
  return {
    state: new StateStore(scopeOf(identity, endpoint), env),
    identity,
    previous: identity && last && !sameScope(identity, last) ? last : undefined,
  };
}

/** What this machine last knew of the address, without asking (the server cannot be reached). */
export function lastKnownState(endpoint: string, env: Env = process.env): Confirmed {
  const identity = lastIdentity(endpoint, env);
  return { state: new StateStore(scopeOf(identity, endpoint), env), identity, previous: undefined };
}
