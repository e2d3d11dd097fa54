/**
 * Signing a machine in from a browser, in the shape of RFC 8628 (OAuth 2.0 device
 * authorization, as `gh auth login` does it): the machine asks for a code pair, shows the short
 * user code, and polls with the long device code; a signed-in person types the user code on the
 * library's `/device` page and approves (or denies) it. The approved code is consumed by the
 * next poll, which creates a device token for the approver, named after the machine: no token
 * exists before, and none is ever stored but as its hash.
 *
 * Bounds: a code lives {@link DEVICE_CODE_SECONDS}; a poll sooner than the interval answers
 * `slow_down` and raises the interval by 5 s (RFC 8628 §3.5); a user code is 8 letters of 20
 * (2.6·10¹⁰ codes), and a signed-in user who names {@link GUESS_LIMIT} unknown ones within
 * {@link GUESS_WINDOW_MS} is refused for the rest of the window (per server process).
 */
import { randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import type { DeviceCodeRecord, SignInStore } from "@pisync/store";
import { BadRequest, NotFound, TooMany } from "./errors.js";
import { checkId } from "./keys.js";
import { hashToken, type Tokens } from "./tokens.js";

/** How long a code pair waits for its person. */
export const DEVICE_CODE_SECONDS = 15 * 60;
/** The seconds a machine waits between polls, at first. */
export const DEVICE_POLL_SECONDS = 5;
/** What each too-early poll adds to the interval (RFC 8628 §3.5), and the most it grows to. */
const SLOW_DOWN_STEP = 5;
const MAX_INTERVAL = 60;
/** Unknown user codes a signed-in user may name per window before being refused. */
export const GUESS_LIMIT = 10;
export const GUESS_WINDOW_MS = 10 * 60_000;
/** Users whose misses are remembered at most (the oldest windows go first). */
const GUESSERS_KEPT = 10_000;

/** Consonants only (RFC 8628 §6.1): no vowels to spell words, no look-alikes such as 0/O and 1/I. */
const ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const USER_CODE_LENGTH = 8;
/** A device code: `pdc_`, its user code, `_`, 32 random bytes in base64url. */
const DEVICE_CODE = /^pdc_([BCDFGHJKLMNPQRSTVWXZ]{8})_[A-Za-z0-9_-]{43}$/;
/** Tries to draw a user code no live code has. */
const DRAWS = 8;

/** What a machine gets when it starts: the codes and how to use them. */
export interface StartedDeviceCode {
  deviceCode: string;
  /** As a person reads it: `BCDF-GHJK`. */
  userCode: string;
  expiresIn: number;
  interval: number;
}

/** A pending code as the approval page shows it. */
export interface PendingDeviceCode {
  /** `BCDF-GHJK`. */
  userCode: string;
  /** The machine's name (the token's, once approved). */
  name: string;
  createdAt: string;
  expiresAt: string;
}

/** `BCDFGHJK` as `BCDF-GHJK`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * A user code as a person typed it (any case, dashes and spaces), normalised; `undefined` when
 * it cannot be one.
 */
export function normalizeUserCode(typed: string): string | undefined {
  const letters = typed.toUpperCase().replace(/[\s-]/g, "");
  return letters.length === USER_CODE_LENGTH && [...letters].every((c) => ALPHABET.includes(c)) ? letters : undefined;
}

/** A machine's name as the token keeps it: printable, one line, at most 100 characters. */
export function machineName(name: string | undefined): string {
  const printable = (name ?? "").replace(/[^\x20-\x7e\u00a0-\uffff]/g, "").trim();
  return printable ? printable.slice(0, 100) : "a machine signed in from the browser";
}

function drawUserCode(): string {
  let code = "";
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

function sameHash(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Device-code sign-in over the metadata store: start (the machine), poll (the machine), look
 * up, approve and deny (the signed-in person).
 *
 * @example
 * ```ts
 * const codes = new DeviceCodes(stores.meta, tokens);
 * const started = await codes.start("laptop");          // show started.userCode
 * await codes.approve("alice", started.userCode);       // on the /device page
 * const { token } = await codes.poll(started.deviceCode); // a new token of alice's, "laptop"
 * ```
 */
export class DeviceCodes {
  /** Misses by user: the window's start and how many. */
  private readonly misses = new Map<string, { since: number; count: number }>();

  constructor(
    private readonly meta: SignInStore,
    private readonly tokens: Tokens,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** A new code pair for a machine called `name` (its host name). */
  async start(name: string | undefined): Promise<StartedDeviceCode> {
    const now = this.clock();
    for (let draw = 0; draw < DRAWS; draw++) {
      const userCode = drawUserCode();
      const deviceCode = `pdc_${userCode}_${randomBytes(32).toString("base64url")}`;
      const stored = await this.meta.putDeviceCode({
        userCode,
        deviceHash: hashToken(deviceCode),
        name: machineName(name),
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + DEVICE_CODE_SECONDS * 1000).toISOString(),
        interval: DEVICE_POLL_SECONDS,
        status: "pending",
      });
      if (stored) {
        return {
          deviceCode,
          userCode: formatUserCode(userCode),
          expiresIn: DEVICE_CODE_SECONDS,
          interval: DEVICE_POLL_SECONDS,
        };
      }
    }
    // Eight live codes in a row drawn among 2.6·10¹⁰: the store is not telling the truth.
    throw new Error("could not draw a free user code");
  }

  /**
   * One poll of the machine: its new token once the code was approved (the code is then gone),
   * else a refusal whose code says what to do (RFC 8628 §3.5).
   * @throws BadRequest `authorization_pending` (ask again after the interval), `slow_down` (the
   * interval grew: it carries `interval`), `access_denied`, `expired_token` (expired, used or unknown)
   */
  async poll(deviceCode: string): Promise<{ token: string; name: string; tokenId: string }> {
    const userCode = DEVICE_CODE.exec(deviceCode)?.[1];
    const record = userCode ? await this.meta.getDeviceCode(userCode) : undefined;
    if (!userCode || !record || !sameHash(record.deviceHash, hashToken(deviceCode))) throw expired();
    const now = this.clock();
    if (record.status === "approved" && record.userId) {
      // Approved in time is approved: consuming it is the one-time step, whoever polls twice.
      const consumed = await this.meta.consumeDeviceCode(userCode, "approved");
      if (!consumed?.userId) throw expired();
      const { token, record: created } = await this.tokens.mint(consumed.userId, consumed.name);
      return { token, name: created.name, tokenId: created.id };
    }
    if (Date.parse(record.expiresAt) <= now.getTime()) {
      await this.meta.consumeDeviceCode(userCode, record.status);
      throw expired();
    }
    if (record.status === "denied") {
      await this.meta.consumeDeviceCode(userCode, "denied");
      throw new BadRequest("the sign-in was denied in the browser", "access_denied");
    }
    const early =
      record.lastPolledAt !== undefined && now.getTime() - Date.parse(record.lastPolledAt) < record.interval * 1000;
    const interval = early ? Math.min(record.interval + SLOW_DOWN_STEP, MAX_INTERVAL) : record.interval;
    // Lost to an approval or a denial made meanwhile: the next poll sees it.
    await this.meta.updateDeviceCode({ ...record, interval, lastPolledAt: now.toISOString() }, "pending");
    if (early) {
      throw new BadRequest(`polled too soon: wait ${interval} seconds between polls`, "slow_down", { interval });
    }
    throw new BadRequest("waiting for the code to be approved in the browser", "authorization_pending", { interval });
  }

  /**
   * The pending code a signed-in person typed, for them to confirm. Counts as a guess when
   * there is none. @throws NotFound (unknown, expired or decided), TooMany (too many misses)
   */
  async pending(userId: string, typed: string): Promise<PendingDeviceCode> {
    const record = await this.live(userId, typed);
    return {
      userCode: formatUserCode(record.userCode),
      name: record.name,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
    };
  }

  /** Approves the code for `userId`: the machine's next poll gets a token of theirs. @throws as {@link pending} */
  approve(userId: string, typed: string): Promise<PendingDeviceCode> {
    return this.decide(userId, typed, "approved");
  }

  /** Denies the code: the machine's next poll gets `access_denied`. @throws as {@link pending} */
  deny(userId: string, typed: string): Promise<PendingDeviceCode> {
    return this.decide(userId, typed, "denied");
  }

  private async decide(userId: string, typed: string, status: "approved" | "denied"): Promise<PendingDeviceCode> {
    const record = await this.live(userId, typed);
    if (!(await this.meta.updateDeviceCode({ ...record, status, userId }, "pending"))) throw gone();
    return {
      userCode: formatUserCode(record.userCode),
      name: record.name,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
    };
  }

  /** The live, pending record of a typed code; a miss is counted against `userId`. */
  private async live(userId: string, typed: string): Promise<DeviceCodeRecord> {
    checkId("user id", userId);
    const now = this.clock().getTime();
    const misses = this.misses.get(userId);
    if (misses && now - misses.since < GUESS_WINDOW_MS && misses.count >= GUESS_LIMIT) {
      const wait = Math.ceil((misses.since + GUESS_WINDOW_MS - now) / 1000);
      throw new TooMany(`too many unknown codes: try again in ${Math.ceil(wait / 60)} minutes`, "rate_limited", wait);
    }
    const userCode = normalizeUserCode(typed);
    const record = userCode ? await this.meta.getDeviceCode(userCode) : undefined;
    if (record && record.status === "pending" && Date.parse(record.expiresAt) > now) return record;
    this.miss(userId, now);
    throw gone();
  }

  private miss(userId: string, now: number): void {
    const misses = this.misses.get(userId);
    if (misses && now - misses.since < GUESS_WINDOW_MS) {
      misses.count++;
      return;
    }
    this.misses.delete(userId);
    if (this.misses.size >= GUESSERS_KEPT) {
      const oldest = this.misses.keys().next().value;
      if (oldest !== undefined) this.misses.delete(oldest);
    }
    this.misses.set(userId, { since: now, count: 1 });
  }
}

function expired(): BadRequest {
  return new BadRequest("this device code expired, was used or is unknown: start again", "expired_token");
}

function gone(): NotFound {
  return new NotFound("no code waiting with these letters: it may have expired (15 minutes) or been used");
}
