/**
 * Per-client and per-link request limits for a long-running server (`npm start`): past them a
 * request answers 429 with `Retry-After`. On Lambda, reserved concurrency and the function's
 * timeout bound the work instead (see the CDK stack).
 */
import type { Context, MiddlewareHandler } from "hono";
import { rateLimiter } from "hono-rate-limiter";

export interface RateLimits {
  /** Requests one client address may make per window (every route but /healthz). */
  perIp: number;
  /** Requests one share link may serve per window, whoever asks (pages, downloads, live polls). */
  perLink: number;
  /** The window, in milliseconds. */
  windowMs: number;
}

/** A minute's worth: a live page polls every 3 s; a first `pisync push` sends tens of requests a second (and backs off on 429). */
export const DEFAULT_RATE_LIMITS: RateLimits = { perIp: 3000, perLink: 300, windowMs: 60_000 };

const tooMany = (c: Context) =>
  c.json({ error: "too many requests: try again after the time in Retry-After", code: "rate_limited" }, 429);

/** The share id of a `/s/<token>...` path (its first dot-separated part), if any. */
function shareIdOf(c: Context): string | undefined {
  const match = /^\/s\/([A-Za-z0-9_-]{1,64})[./]/.exec(new URL(c.req.url).pathname);
  return match?.[1];
}

/** Both limits, as middlewares (per client first); `clientIp` names the caller (the socket's address on Node). */
export function rateLimits(limits: RateLimits, clientIp: (c: Context) => string): MiddlewareHandler[] {
  const common = { windowMs: limits.windowMs, standardHeaders: "draft-6" as const, handler: tooMany };
  const perIp = rateLimiter({
    ...common,
    limit: limits.perIp,
    keyGenerator: (c) => `ip:${clientIp(c)}`,
    skip: (c) => new URL(c.req.url).pathname === "/healthz",
  });
  const perLink = rateLimiter({
    ...common,
    limit: limits.perLink,
    keyGenerator: (c) => `link:${shareIdOf(c)}`,
    skip: (c) => shareIdOf(c) === undefined,
  });
  return [perIp, perLink];
}
