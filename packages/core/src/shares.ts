/**
 * Share links: `/s/<id>.<key id>.<signature>`, the signature an HMAC-SHA256 of `<id>.<key id>`
 * by a server key (key ids let keys rotate), compared in constant time, and the share's record
 * checked on every request. Tampered or unknown: NotFound. Expired or revoked: Gone. Neither
 * says whether the session exists.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { SHARE_ID, SHARE_KEY_ID } from "@pisync/protocol";
import type { SessionHead, SessionStore, ShareRecord, ShareStore } from "@pisync/store";
import { BadRequest, Gone, NotFound } from "./errors.js";
import { checkSessionId } from "./keys.js";
import type { Reader } from "./reader.js";

/** Signing keys by id; `current` signs new links, every key verifies. */
export interface ShareKeys {
  current: string;
  keys: Record<string, string>;
}

const KEY_ID = SHARE_KEY_ID;

/** Reads keys from `{"current":"k2","keys":{"k1":"…","k2":"…"}}` or a bare secret (key id k1). */
export function parseShareKeys(text: string): ShareKeys {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    const parsed = JSON.parse(trimmed) as ShareKeys;
    if (
      !parsed.keys ||
      !Object.hasOwn(parsed.keys, parsed.current) ||
      !Object.keys(parsed.keys).every((id) => KEY_ID.test(id))
    ) {
      throw new Error("share keys: `current` must name one of `keys`, ids of 1-16 letters and digits");
    }
    return parsed;
  }
  if (trimmed.length < 32) throw new Error("a share key must be at least 32 characters");
  return { current: "k1", keys: { k1: trimmed } };
}

/** A fresh signing key set for share links (one random key, `k1`). */
export function newShareKeys(): ShareKeys {
  return { current: "k1", keys: { k1: randomBytes(32).toString("base64url") } };
}

export interface ShareLimits {
  /** Longest life of a link, in seconds (default 90 days). */
  maxSeconds: number;
  /** Life of a link when none is asked (default 7 days). */
  defaultSeconds: number;
}

export const DEFAULT_SHARE_LIMITS: ShareLimits = { maxSeconds: 90 * 86400, defaultSeconds: 7 * 86400 };

/** Where a share link stands now. */
export type ShareStatus = "active" | "expired" | "revoked";

/**
 * The rules a session's team sets on its links (core's `Teams`): whether one may be made, whether
 * one made earlier still opens, and the record of one made.
 */
export interface SharePolicy {
  /** @throws Forbidden `team_policy` when the session's team allows no public links */
  checkShare(userId: string, sessionId: string): Promise<void>;
  shareAllowed(share: ShareRecord): Promise<boolean>;
  shared(share: ShareRecord): Promise<void>;
}

/**
 * Share links: create (signed, expiring, bound to the session's creation), list, revoke, and
 * open a token (tampered or unknown: NotFound; expired or revoked: Gone).
 */
export class Shares {
  constructor(
    private readonly meta: ShareStore & SessionStore,
    private readonly keys: () => Promise<ShareKeys>,
    private readonly clock: () => Date = () => new Date(),
    readonly limits: ShareLimits = DEFAULT_SHARE_LIMITS,
    private readonly policy?: SharePolicy,
  ) {}

  private static sign(secret: string, payload: string): string {
    return createHmac("sha256", secret).update(payload).digest("base64url");
  }

  /** The token of a share, signed by the current key. */
  async tokenOf(shareId: string): Promise<string> {
    const keys = await this.keys();
    const payload = `${shareId}.${keys.current}`;
    return `${payload}.${Shares.sign(keys.keys[keys.current], payload)}`;
  }

  /** A share of `head`'s session as it is now (a later session under the same id is another). */
  async create(input: {
    userId: string;
    sessionId: string;
    /** The head's `createdAt`: binds the share to this incarnation of the session. */
    sessionCreatedAt: string;
    leafId?: string;
    expiresIn?: number;
    maskSecrets?: boolean;
  }): Promise<{ share: ShareRecord; token: string }> {
    checkSessionId(input.sessionId);
    const seconds = input.expiresIn ?? this.limits.defaultSeconds;
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > this.limits.maxSeconds) {
      throw new BadRequest(
        `expiresIn must be whole seconds from 1 to ${this.limits.maxSeconds}`,
        "expiry_out_of_range",
        {
          maxSeconds: this.limits.maxSeconds,
        },
      );
    }
    await this.policy?.checkShare(input.userId, input.sessionId);
    const now = this.clock();
    const share: ShareRecord = {
      id: randomBytes(16).toString("base64url"),
      userId: input.userId,
      sessionId: input.sessionId,
      sessionCreatedAt: input.sessionCreatedAt,
      leafId: input.leafId,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + seconds * 1000).toISOString(),
      maskSecrets: input.maskSecrets ?? true,
    };
    await this.meta.putShare(share);
    await this.policy?.shared(share);
    return { share, token: await this.tokenOf(share.id) };
  }

  statusOf(share: ShareRecord): ShareStatus {
    if (share.revokedAt) return "revoked";
    return Date.parse(share.expiresAt) <= this.clock().getTime() ? "expired" : "active";
  }

  list(userId: string): Promise<ShareRecord[]> {
    return this.meta.listShares(userId);
  }

  /** Revokes one of the user's shares; effective on the next request. */
  async revoke(userId: string, shareId: string): Promise<ShareRecord> {
    const share = SHARE_ID.test(shareId) ? await this.meta.getShare(shareId) : undefined;
    if (!share || share.userId !== userId) throw new NotFound("no such share");
    const revoked = { ...share, revokedAt: share.revokedAt ?? this.clock().toISOString() };
    await this.meta.putShare(revoked);
    return revoked;
  }

  /**
   * Revokes every share of the user that is not revoked yet (expired ones too: a revoked link
   * stays dead whatever its expiry).
   * @returns how many were revoked
   */
  async revokeAll(userId: string): Promise<number> {
    const now = this.clock().toISOString();
    const live = (await this.meta.listShares(userId)).filter((share) => !share.revokedAt);
    await Promise.all(live.map((share) => this.meta.putShare({ ...share, revokedAt: now })));
    return live.length;
  }

  /** Counts one view of a share's page (count and time only: nothing of the reader is kept). */
  recordView(share: ShareRecord): Promise<void> {
    return this.meta.recordShareView(share.id, this.clock().toISOString());
  }

  /** Counts one download of a share's file or context (a count only, as for views). */
  recordDownload(share: ShareRecord): Promise<void> {
    return this.meta.recordShareDownload(share.id);
  }

  /**
   * The share a token names and its session's head. A missing session looks like a missing
   * link; a session deleted and uploaded again since the share was made is another session,
   * so the link is as dead as a revoked one.
   */
  async open(token: string): Promise<{ share: ShareRecord; head: SessionHead }> {
    const share = await this.resolve(token);
    const head = await this.meta.getHead(share.userId, share.sessionId);
    if (!head) throw new NotFound("no such link");
    // Shares made before incarnations were recorded: one older than the session is of an earlier one.
    const incarnation = share.sessionCreatedAt ?? (share.createdAt < head.createdAt ? "" : head.createdAt);
    if (incarnation !== head.createdAt) throw new Gone("this link has been revoked");
    return { share, head };
  }

  /** The share a token names, if the token is genuine and the share active. */
  async resolve(token: string): Promise<ShareRecord> {
    const parts = token.split(".");
    const unknown = new NotFound("no such link");
    if (parts.length !== 3 || !SHARE_ID.test(parts[0]) || !KEY_ID.test(parts[1])) throw unknown;
    const keys = await this.keys();
    // Own keys only: `constructor` or `toString` as a key id names no key.
    const secret = Object.hasOwn(keys.keys, parts[1]) ? keys.keys[parts[1]] : undefined;
    if (typeof secret !== "string" || !secret) throw unknown;
    const expected = Buffer.from(Shares.sign(secret, `${parts[0]}.${parts[1]}`));
    const given = Buffer.from(parts[2]);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw unknown;
    const share = await this.meta.getShare(parts[0]);
    if (!share) throw unknown;
    const status = this.statusOf(share);
    if (status !== "active") throw new Gone(`this link has ${status === "revoked" ? "been revoked" : "expired"}`);
    // A team that turned public links off closes the links made before as well.
    if (this.policy && !(await this.policy.shareAllowed(share))) throw new Gone("this link has been turned off");
    return share;
  }
}

/**
 * Shares a session of `userId` as it is now: the whole of it (live), or the branch ending at
 * `leafId` (pinned).
 * @throws NotFound when the session or the entry is missing; BadRequest `expiry_out_of_range`
 */
export async function shareSession(
  reader: Reader,
  shares: Shares,
  input: { userId: string; sessionId: string; leafId?: string; expiresIn?: number; maskSecrets?: boolean },
): Promise<{ share: ShareRecord; token: string }> {
  const head = await reader.head(input.userId, input.sessionId);
  if (input.leafId !== undefined) {
    const { index } = await reader.index(head, head.current);
    if (!index.byId(input.leafId)) throw new NotFound(`no entry ${input.leafId} in this session`);
  }
  return shares.create({ ...input, sessionCreatedAt: head.createdAt });
}
