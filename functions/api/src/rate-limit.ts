/**
 * Request limits for a long-running server (`npm start`): past them a request answers 429
 * with `Retry-After`. On Lambda, reserved concurrency and the function's timeout bound the
 * work instead (see the CDK stack).
 *
 * Who pays for a request is decided by what vouches for it:
 * - a credential that checks (a bearer token or a signed-in browser: `perToken`; a share link
 *   whose signature checks: `perLink`) pays, whatever address it comes from: people behind one
 *   NAT do not share a budget, and forged links never use up a real one; a token or browser
 *   also pays into its user's budget (`perUser`), shared by all of them: minting tokens does
 *   not mint budgets;
 * - a request nothing vouches for (no credential, or one that does not check) is counted
 *   against its client address (`perIp`). Once an address is over, its requests that carry no
 *   credential are refused at once; one that carries a credential is still heard (a neighbour
 *   behind the same address is not locked out) and refused only if the credential fails.
 * Credentials are checked where they always were (the auth middlewares, the share routes),
 * which call {@link admit}.
 */

import { USER_LIMITS } from "@pisync/protocol";
import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { MemoryStore } from "hono-rate-limiter";

export interface RateLimits {
  /** Requests nothing vouches for that one client address may make per window (every route but /healthz). */
  perIp: number;
  /** Requests one token or signed-in browser may make per window (default {@link DEFAULT_RATE_LIMITS}'). */
  perToken?: number;
  /** Requests all tokens and signed-in browsers of one user may make together per window. */
  perUser?: number;
  /** Requests one share link may serve per window, whoever asks (pages, downloads, live polls). */
  perLink: number;
  /**
   * Requests all share links of one owner may serve together per window: a link is a credential
   * its owner makes at will, so many links are not many budgets.
   */
  perOwnerLinks?: number;
  /** The window, in milliseconds. */
  windowMs: number;
}

/**
 * A minute's worth. A live page polls every 3 s. A first `pisync push` of a year of sessions
 * (thousands of files, two or three requests each, as fast as the server answers) stays well
 * under `perToken`, and waits out a 429 if it ever meets one.
 */
export const DEFAULT_RATE_LIMITS: Required<RateLimits> = {
  perIp: 3000,
  perToken: 30_000,
  perUser: USER_LIMITS.requestsPerMinute,
  perLink: 300,
  perOwnerLinks: 3000,
  windowMs: 60_000,
};

/** What vouches for a request: a token or signed-in browser, or a share link. */
export type Credential = "token" | "link";

type Admission = (credential: Credential, id: string, userId?: string) => void;

/** Where the limiter leaves its admission for the credential checks after it. */
const ADMISSION = "pisyncAdmission";

const TOO_MANY = { error: "too many requests: try again after the time in Retry-After", code: "rate_limited" };

function tooMany(retryAfter: number): Response {
  return new Response(JSON.stringify(TOO_MANY), {
    status: 429,
    headers: { "Content-Type": "application/json", "Retry-After": String(retryAfter), "Cache-Control": "no-store" },
  });
}

/**
 * Records that `credential` `id` checked for this request, and counts the request against its
 * budget and its user's `userId` (a token's or browser's user; a link's owner, whose links share
 * one budget); nothing when the server sets no limits.
 * @throws HTTPException 429 with `Retry-After` when a budget is spent
 */
export function admit(c: Context, credential: Credential, id: string, userId?: string): void {
  (c.get(ADMISSION as never) as Admission | undefined)?.(credential, id, userId);
}

/** Fixed-window counters by key (hono-rate-limiter's store). */
class Counters {
  private readonly store = new MemoryStore();

  constructor(windowMs: number) {
    this.store.init({ windowMs } as Parameters<MemoryStore["init"]>[0]);
  }

  /** Counts one request of `key`; the seconds to wait when that is more than `limit`, else undefined. */
  hit(key: string, limit: number): number | undefined {
    const { totalHits, resetTime } = this.store.increment(key);
    return totalHits > limit ? secondsUntil(resetTime) : undefined;
  }

  /** The seconds to wait when `key` already spent `limit` in this window, else undefined (nothing counted). */
  spent(key: string, limit: number): number | undefined {
    const client = this.store.get(key);
    if (!client?.resetTime || client.resetTime.getTime() <= Date.now()) return undefined;
    return client.totalHits >= limit ? secondsUntil(client.resetTime) : undefined;
  }
}

function secondsUntil(at: Date | undefined): number {
  return Math.max(1, Math.ceil(((at?.getTime() ?? Date.now()) - Date.now()) / 1000));
}

/** A share link's token in the path (`/s/<id>.<key id>.<signature>…`), as opposed to its assets. */
const SHARE_TOKEN_PATH = /^\/s\/[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9]{1,16}\./;

/** Whether a request carries something that may vouch for it: a bearer token, a browser session, a share link, a sign-in link. */
function carriesCredential(c: Context): boolean {
  const path = new URL(c.req.url).pathname;
  return (
    c.req.header("Authorization") !== undefined ||
    /(?:^|;\s*)pisync_session=/.test(c.req.header("Cookie") ?? "") ||
    SHARE_TOKEN_PATH.test(path) ||
    path.startsWith("/login/")
  );
}

/**
 * The limits as middlewares (one, first of all): budgets per credential that checks (see
 * {@link admit}) and per client address for the rest; `clientIp` names the caller (the
 * socket's address on Node).
 */
export function rateLimits(limits: RateLimits, clientIp: (c: Context) => string): MiddlewareHandler[] {
  const counters = new Counters(limits.windowMs);
  const perToken = limits.perToken ?? DEFAULT_RATE_LIMITS.perToken;
  const perUser = limits.perUser ?? DEFAULT_RATE_LIMITS.perUser;
  const perOwnerLinks = limits.perOwnerLinks ?? DEFAULT_RATE_LIMITS.perOwnerLinks;
  const middleware = createMiddleware(async (c, next) => {
    if (new URL(c.req.url).pathname === "/healthz") return next();
    const address = `ip:${clientIp(c)}`;
    let vouched = false;
    const admission: Admission = (credential, id, userId) => {
      vouched = true;
      // Both budgets count the request; the longer wait is the answer.
      const own = counters.hit(`${credential}:${id}`, credential === "token" ? perToken : limits.perLink);
      // A link's reads pay into its owner's links' budget; a token's or browser's into its user's.
      const user =
        userId === undefined
          ? undefined
          : credential === "link"
            ? counters.hit(`links-of:${userId}`, perOwnerLinks)
            : counters.hit(`user:${userId}`, perUser);
      const wait = own === undefined ? user : Math.max(own, user ?? 0);
      if (wait !== undefined) {
        // The error boundary answers it (as `rate_limited`) with these headers.
        c.header("Retry-After", String(wait));
        c.header("Cache-Control", "no-store");
        throw new HTTPException(429, { res: tooMany(wait), message: TOO_MANY.error });
      }
    };
    c.set(ADMISSION as never, admission as never);
    const shut = counters.spent(address, limits.perIp);
    if (shut !== undefined && !carriesCredential(c)) return tooMany(shut);
    await next();
    if (vouched) return;
    // Nothing vouched for it: the address pays, and past its budget the answer is 429 (whatever
    // the failed credential would have been told).
    const wait = counters.hit(address, limits.perIp);
    if (wait !== undefined) {
      c.res = undefined;
      c.res = tooMany(wait);
    }
  });
  return [middleware];
}
