/**
 * The credentials port: device tokens, stored as hashes only, listed and revoked by their public id.
 * Errors follow the contract in `ports.ts`.
 */

/** A device token, stored as a hash only. */
export interface TokenRecord {
  /** SHA-256 of the token, hex. */
  hash: string;
  userId: string;
  /** A short public id, to list and revoke tokens without their secret. */
  id: string;
  name: string;
  createdAt: string;
  /** When it last authenticated a request (written at most about once a minute). */
  lastUsedAt?: string;
}

/** Device tokens. */
export interface TokenStore {
  /** Stores a token's record (its hash, never the secret). */
  putToken(token: TokenRecord): Promise<void>;
  /** The token whose SHA-256 is `hash`; `undefined` when none is. */
  findToken(hash: string): Promise<TokenRecord | undefined>;
  /** A user's token records. */
  listTokens(userId: string): Promise<TokenRecord[]>;
  /**
   * A page of a user's tokens, by id (at most `limit`, read from an index: never all of them);
   * `cursor`, from the previous page, is absent on the last. @throws InvalidCursorError for a
   * cursor another user's list gave, or none gave
   */
  listTokenPage(
    userId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ tokens: TokenRecord[]; cursor?: string }>;
  /** @returns whether a token with that id existed for that user. */
  deleteToken(userId: string, id: string): Promise<boolean>;
  /** Renames a user's token `id`; @returns whether that user had it (another user's is left alone). */
  renameToken(userId: string, id: string, name: string): Promise<boolean>;
  /** Records a token's last use; a token deleted meanwhile stays deleted (nothing is written). */
  touchToken(hash: string, lastUsedAt: string): Promise<void>;
}
