/**
 * Sign-in without passwords: a device token asks for a one-time link (`psl_…`, valid 60 s,
 * single use); opening it makes a browser session whose secret (`pss_…`) travels only in an
 * HttpOnly cookie. The store keeps SHA-256 hashes of both secrets, never the secrets.
 *
 * The CSRF token is derived, not stored: HMAC-SHA256 of a fixed label keyed with the session's
 * secret. It is bound to that one session (it changes at each sign-in and dies with it), costs
 * no write, and cannot be computed from anything the store holds (a leaked table gives hashes).
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { BROWSER_SECRET, LOGIN_SECRET } from "@pisync/protocol";
import {
  type BrowserSessionRecord,
  type BrowserSessionStore,
  InvalidCursorError,
  type SignInStore,
  type TokenRecord,
  type TokenStore,
} from "@pisync/store";
import { BadRequest, Gone, NotFound } from "./errors.js";
import { checkId } from "./keys.js";
import { hashToken, TOUCH_EVERY_MS } from "./tokens.js";

/** How long a sign-in link signs someone in. */
export const LOGIN_LINK_SECONDS = 60;
/** A browser session unused this long is refused and removed. */
export const IDLE_DAYS = 30;

const IDLE_MS = IDLE_DAYS * 24 * 3600 * 1000;
const MAX_NEXT = 2048;

/**
 * `next` as a path of this server: one leading `/` (no `//`, no `/\`, which browsers read as
 * another host), no scheme, no control characters. Absent means `/`.
 * @throws BadRequest `invalid_next`
 */
export function safeNextPath(next: string | undefined): string {
  if (next === undefined || next === "") return "/";
  const fine =
    next.length <= MAX_NEXT &&
    next.startsWith("/") &&
    !next.startsWith("//") &&
    !next.startsWith("/\\") &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    !/[\u0000-\u001f\u007f\\]/.test(next);
  if (!fine) {
    throw new BadRequest(
      "next must be a path of this server: it starts with a single /, without a scheme or host",
      "invalid_next",
    );
  }
  return next;
}

/** The CSRF token of the browser session whose cookie secret is `secret`. */
export function csrfTokenOf(secret: string): string {
  return createHmac("sha256", secret).update("pisync csrf v1").digest("base64url");
}

/** Whether `given` is the CSRF token of the session `secret` (compared in constant time). */
export function csrfMatches(secret: string, given: string | undefined): boolean {
  if (!given) return false;
  const expected = Buffer.from(csrfTokenOf(secret));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(e|A|iOS)?\//, "Edge"],
  [/\bFirefox\/|\bFxiOS\//, "Firefox"],
  [/\bOPR\//, "Opera"],
  [/\b(Headless)?Chrom(e|ium)\/|\bCriOS\//, "Chrome"],
  [/\bSafari\//, "Safari"],
  [/\bcurl\//, "curl"],
];
const SYSTEMS: Array<[RegExp, string]> = [
  [/\bAndroid\b/, "Android"],
  [/\b(iPhone|iPad|iPod)\b/, "iOS"],
  [/\bWindows\b/, "Windows"],
  [/\bMac OS X\b|\bMacintosh\b/, "macOS"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bLinux\b/, "Linux"],
];

/**
 * A short label of a browser from its User-Agent ("Firefox on Linux"): the header is the
 * client's to write, so only a known name is kept, or a short printable cut of it.
 */
export function userAgentLabel(userAgent: string | undefined): string {
  const ua = userAgent ?? "";
  const browser = BROWSERS.find(([pattern]) => pattern.test(ua))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(ua))?.[1];
  if (browser) return system ? `${browser} on ${system}` : browser;
  const printable = ua.replace(/[^\x20-\x7e]/g, "").trim();
  return printable ? printable.slice(0, 40) : "unknown browser";
}

/** A browser session as a request sees it. */
export interface SignedInBrowser {
  record: BrowserSessionRecord;
  /** Its CSRF token (forms carry it back). */
  csrfToken: string;
}

/** A token or browser session, as the devices page lists it. */
export interface Device {
  kind: "token" | "browser";
  id: string;
  /** The token's name, or the browser's label. */
  name: string;
  createdAt: string;
  lastUsedAt?: string;
  /** Whether this is what the request listing it was signed in with. */
  current: boolean;
}

/**
 * One-time sign-in links and the browser sessions they make, over the metadata store.
 *
 * @example
 * ```ts
 * const sessions = new BrowserSessions(stores.meta);
 * const { secret } = await sessions.createLoginLink("alice", "/sessions/abc");
 * const signedIn = await sessions.redeem(secret, request.headers.get("User-Agent"));
 * // cookie: signedIn.secret; forms: signedIn.csrfToken; then go to signedIn.next
 * ```
 */
export class BrowserSessions {
  constructor(
    private readonly meta: BrowserSessionStore & SignInStore & TokenStore,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * A new sign-in link's secret for `userId`, valid {@link LOGIN_LINK_SECONDS} and once.
   * @throws BadRequest `invalid_next` when `next` is not a path of this server
   */
  async createLoginLink(userId: string, next?: string): Promise<{ secret: string; expiresAt: string; next: string }> {
    checkId("user id", userId);
    const path = safeNextPath(next);
    const secret = `psl_${randomBytes(32).toString("base64url")}`;
    const now = this.clock();
    const expiresAt = new Date(now.getTime() + LOGIN_LINK_SECONDS * 1000).toISOString();
    await this.meta.putLoginLink({
      hash: hashToken(secret),
      userId,
      next: path,
      createdAt: now.toISOString(),
      expiresAt,
    });
    return { secret, expiresAt, next: path };
  }

  /**
   * Redeems a sign-in link (it is gone afterwards, whatever the outcome) and starts a browser
   * session: its secret (for the cookie), CSRF token and where to go.
   * @throws NotFound for an unknown or already used link; Gone for an expired one
   */
  async redeem(
    linkSecret: string,
    userAgent: string | undefined,
  ): Promise<{ secret: string; csrfToken: string; next: string; record: BrowserSessionRecord }> {
    const link = LOGIN_SECRET.test(linkSecret) ? await this.meta.consumeLoginLink(hashToken(linkSecret)) : undefined;
    if (!link) throw new NotFound("this sign-in link is unknown or was already used");
    const now = this.clock();
    if (Date.parse(link.expiresAt) <= now.getTime()) throw new Gone("this sign-in link expired");
    const secret = `pss_${randomBytes(32).toString("base64url")}`;
    const record: BrowserSessionRecord = {
      hash: hashToken(secret),
      userId: link.userId,
      id: randomBytes(6).toString("hex"),
      createdAt: now.toISOString(),
      lastUsedAt: now.toISOString(),
      userAgent: userAgentLabel(userAgent),
    };
    await this.meta.putBrowserSession(record);
    return { secret, csrfToken: csrfTokenOf(secret), next: link.next, record };
  }

  /**
   * The browser session of a cookie's secret, or `undefined` when there is none (malformed,
   * unknown, revoked, or idle for {@link IDLE_DAYS}: an idle one is removed). Records the use
   * at most once per {@link TOUCH_EVERY_MS}.
   */
  async authenticate(secret: string | undefined): Promise<SignedInBrowser | undefined> {
    if (!secret || !BROWSER_SECRET.test(secret)) return undefined;
    const record = await this.meta.findBrowserSession(hashToken(secret));
    if (!record) return undefined;
    const now = this.clock();
    const idle = now.getTime() - Date.parse(record.lastUsedAt);
    if (idle >= IDLE_MS) {
      await this.meta.deleteBrowserSession(record.userId, record.id);
      return undefined;
    }
    if (idle >= TOUCH_EVERY_MS) {
      record.lastUsedAt = now.toISOString();
      await this.meta.touchBrowserSession(record.hash, record.lastUsedAt);
    }
    return { record, csrfToken: csrfTokenOf(secret) };
  }

  /**
   * A page of `userId`'s browser sessions then tokens (browsers oldest first, tokens by id), at
   * most `limit`, read a page at a time from the store (never all of them); `current` marks the
   * one the listing request was signed in with. A browser unused for 30 days is left out.
   * @throws BadRequest for a cursor this user's list did not give
   */
  async devices(
    userId: string,
    current: { browserId?: string; tokenId?: string },
    page: { limit: number; cursor?: string } = { limit: DEVICES_PAGE },
  ): Promise<DeviceList> {
    const limit = Math.max(1, Math.min(Math.floor(page.limit), DEVICES_PAGE));
    const [part, inner] = splitDeviceCursor(page.cursor);
    const devices: Device[] = [];
    try {
      if (part === "b") {
        const browsers = await this.meta.listBrowserSessionPage(userId, { limit, cursor: inner });
        const now = this.clock().getTime();
        for (const b of browsers.sessions) {
          if (now - Date.parse(b.lastUsedAt) < IDLE_MS)
            devices.push(deviceOf("browser", b, b.userAgent, b.id === current.browserId));
        }
        if (browsers.cursor) return { devices, cursor: `b.${browsers.cursor}` };
      }
      // The tokens follow on the same page when it has room; one is read to know whether any follow.
      const room = part === "b" ? limit - devices.length : limit;
      const tokens = await this.meta.listTokenPage(userId, {
        limit: Math.max(room, 1),
        cursor: part === "t" ? inner : undefined,
      });
      if (room === 0) return tokens.tokens.length ? { devices, cursor: "t." } : { devices };
      for (const t of tokens.tokens) devices.push(deviceOf("token", t, t.name, t.id === current.tokenId));
      return tokens.cursor ? { devices, cursor: `t.${tokens.cursor}` } : { devices };
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new BadRequest(error.message, "bad_request");
      throw error;
    }
  }

  /** Signs out one browser session of `userId`; false when it has none with that id. */
  revoke(userId: string, id: string): Promise<boolean> {
    return this.meta.deleteBrowserSession(userId, id);
  }

  /** Signs out every browser session of `userId` (tokens stay); how many there were. */
  revokeAll(userId: string): Promise<number> {
    return this.meta.deleteBrowserSessions(userId);
  }
}

/** Devices a page lists at most. */
export const DEVICES_PAGE = 50;

/** A page of devices; `cursor` (pass it back for the next page) is absent on the last. */
export interface DeviceList {
  devices: Device[];
  cursor?: string;
}

/** Which part of the list a cursor resumes (`b`rowsers or `t`okens) and the store's cursor in it. */
function splitDeviceCursor(cursor: string | undefined): ["b" | "t", string | undefined] {
  if (cursor === undefined || cursor === "") return ["b", undefined];
  const part = cursor.slice(0, 2);
  if (part !== "b." && part !== "t.") throw new BadRequest("not a cursor of this list", "bad_request");
  return [part[0] as "b" | "t", cursor.slice(2) || undefined];
}

function deviceOf(
  kind: Device["kind"],
  record: BrowserSessionRecord | TokenRecord,
  name: string,
  current: boolean,
): Device {
  return {
    kind,
    id: record.id,
    name,
    createdAt: record.createdAt,
    ...(record.lastUsedAt ? { lastUsedAt: record.lastUsedAt } : {}),
    current,
  };
}
