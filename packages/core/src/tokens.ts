/**
 * Device tokens: `pst_` + 32 random bytes (base64url). Only their SHA-256 is stored; a token
 * is shown once, when created. Each has a short public id to list and revoke it.
 */
import { createHash, randomBytes } from "node:crypto";
import { TOKEN, USER_LIMITS } from "@pisync/protocol";
import type { TokenRecord, TokenStore } from "@pisync/store";
import { TooMany, Unauthorized } from "./errors.js";
import { checkId } from "./keys.js";

/** Last use is written at most this often per token or browser session (so a request is not a write). */
export const TOUCH_EVERY_MS = 60_000;

/** The SHA-256 of a token, in hex: the only form of it the store keeps. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** A new secret token: `pst_` and 32 random bytes in base64url (47 characters). */
export function createToken(): string {
  return `pst_${randomBytes(32).toString("base64url")}`;
}

const TOKEN_SHAPE = TOKEN;

/**
 * Device tokens over the metadata store: create (the secret is returned once), authenticate,
 * list and revoke.
 *
 * @example
 * ```ts
 * const tokens = new Tokens(stores.meta);
 * const { token } = await tokens.create("alice", "laptop");
 * const record = await tokens.authenticate(token); // record.userId === "alice"
 * ```
 */
export class Tokens {
  constructor(
    private readonly meta: TokenStore,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Creates a token for `userId`; returns the secret (shown once) and its record. */
  async create(userId: string, name: string): Promise<{ token: string; record: TokenRecord }> {
    checkId("user id", userId);
    const token = createToken();
    const record: TokenRecord = {
      hash: hashToken(token),
      userId,
      id: randomBytes(6).toString("hex"),
      name: name.slice(0, 100),
      createdAt: this.clock().toISOString(),
    };
    await this.meta.putToken(record);
    return { token, record };
  }

  /**
   * A token a user asked for (the API, a page): refused while the user holds `max` live tokens,
   * so that a credential cannot mint budgets and credentials without end. (Creating concurrently
   * may pass the bound by the few in flight.) @throws TooMany `too_many_tokens`
   */
  async mint(
    userId: string,
    name: string,
    max: number = USER_LIMITS.liveTokens,
  ): Promise<{ token: string; record: TokenRecord }> {
    checkId("user id", userId);
    if ((await this.meta.listTokens(userId)).length >= max) {
      throw new TooMany(`at most ${max} tokens are live at once: revoke one first`, "too_many_tokens", 60, {
        maxTokens: max,
      });
    }
    return this.create(userId, name);
  }

  /**
   * The user a bearer token belongs to. Records the token's use at most once a minute (the
   * devices page shows it), so most requests write nothing. @throws Unauthorized
   */
  async authenticate(token: string | undefined): Promise<TokenRecord> {
    if (!token || !TOKEN_SHAPE.test(token)) throw new Unauthorized("a valid bearer token is required");
    const record = await this.meta.findToken(hashToken(token));
    if (!record) throw new Unauthorized("unknown token");
    const now = this.clock();
    if (!record.lastUsedAt || now.getTime() - Date.parse(record.lastUsedAt) >= TOUCH_EVERY_MS) {
      record.lastUsedAt = now.toISOString();
      await this.meta.touchToken(record.hash, record.lastUsedAt);
    }
    return record;
  }

  /** The records (never the secrets) of `userId`'s tokens. */
  list(userId: string): Promise<TokenRecord[]> {
    return this.meta.listTokens(userId);
  }

  /** Renames `userId`'s token `id` (cut to 100 characters); false when it has no such token (another user's included). */
  rename(userId: string, id: string, name: string): Promise<boolean> {
    return this.meta.renameToken(userId, id, name.slice(0, 100));
  }

  /** Revokes `userId`'s token `id`; false when it has no such token (another user's included). */
  revoke(userId: string, id: string): Promise<boolean> {
    return this.meta.deleteToken(userId, id);
  }
}
