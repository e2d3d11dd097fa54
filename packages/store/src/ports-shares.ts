/**
 * The shares port: read-only links to sessions, with their view and download counts.
 * Errors follow the contract in `ports.ts`.
 */

/** A read-only link to a session. */
export interface ShareRecord {
  id: string;
  userId: string;
  sessionId: string;
  /** Pinned to one branch, or live and whole when absent. */
  leafId?: string;
  /**
   * The `createdAt` of the session head the share was made of: a session deleted and uploaded
   * again under the same id is another session, and never revives this share.
   */
  sessionCreatedAt?: string;
  createdAt: string;
  expiresAt: string;
  revokedAt?: string;
  /** Whether credentials are masked in what the share shows. */
  maskSecrets: boolean;
  /** How many times its page was opened (kept by {@link ShareStore.recordShareView}, never by `putShare`). */
  views?: number;
  /** When its page was last opened. No address or anything else of the reader is kept. */
  lastViewedAt?: string;
  /** How many times its file or context was downloaded (kept by {@link ShareStore.recordShareDownload}). */
  downloads?: number;
}

/** Share links. */
export interface ShareStore {
  /**
   * Writes a share link's record whole (creating it, or recording its revocation); its view count
   * and last view are left as they are.
   */
  putShare(share: ShareRecord): Promise<void>;
  /** A share by its id, whoever owns it (the caller checks the owner); `undefined` when unknown. */
  getShare(id: string): Promise<ShareRecord | undefined>;
  /** A user's share links, revoked ones included. */
  listShares(userId: string): Promise<ShareRecord[]>;
  /** A page of a user's share links, newest first (by `createdAt`, then id). @throws InvalidCursorError */
  listSharePage(
    userId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ shares: ShareRecord[]; cursor?: string }>;
  /** Counts one view of a share's page, at `at`: one atomic update, whoever else counts at once. Unknown ids change nothing. */
  recordShareView(id: string, at: string): Promise<void>;
  /** Counts one download of a share's file or context (`/raw`, `/context`), as atomically. Unknown ids change nothing. */
  recordShareDownload(id: string): Promise<void>;
}
