/**
 * Large-line uploads: a line too large for one request is PUT beforehand (straight to S3 by a
 * presigned URL, or to the API where the store has none), then appended by its upload id.
 */
import { randomBytes } from "node:crypto";
import { UPLOAD_ID } from "@pisync/protocol";
import { type BlobStore, NotFoundError, uploadKey } from "@pisync/store";
import { BadRequest, NotFound } from "./errors.js";
import { checkSessionId } from "./keys.js";

/** How long an upload URL works. */
const UPLOAD_SECONDS = 900;

/** Where to PUT an upload's bytes: `url` is undefined when the API itself takes them. */
export interface UploadTicket {
  uploadId: string;
  url?: string;
  expiresAt: string;
}

/** Large-line uploads of a user: create, store, take into an append, discard. */
export class Uploads {
  constructor(
    private readonly blobs: BlobStore,
    /** The largest line an upload may hold. */
    readonly maxBytes: number,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * A new upload of `length` bytes for a line of `sessionId` (which may not exist yet: a large
   * line may be its first).
   * @throws BadRequest `invalid_session_id`, `upload_too_large`
   */
  async create(userId: string, sessionId: string, length: number): Promise<UploadTicket> {
    checkSessionId(sessionId);
    if (length > this.maxBytes) {
      throw new BadRequest(`an upload is at most ${this.maxBytes} bytes`, "upload_too_large", {
        maxBytes: this.maxBytes,
      });
    }
    const uploadId = randomBytes(16).toString("hex");
    const url = await this.blobs.uploadUrl(uploadKey(userId, uploadId), UPLOAD_SECONDS, length);
    const expiresAt = new Date(this.clock().getTime() + UPLOAD_SECONDS * 1000).toISOString();
    return { uploadId, url, expiresAt };
  }

  /** Stores an upload's bytes (where the store has no presigned URL). @throws BadRequest `invalid_upload_id` */
  async put(userId: string, uploadId: string, body: Uint8Array): Promise<void> {
    await this.blobs.put(uploadKey(userId, Uploads.check(uploadId)), body);
  }

  /** The bytes of an upload. @throws NotFound when missing or expired; BadRequest `invalid_upload_id` */
  async take(userId: string, uploadId: string): Promise<Uint8Array> {
    try {
      return await this.blobs.get(uploadKey(userId, Uploads.check(uploadId)));
    } catch (error) {
      if (error instanceof NotFoundError) throw new NotFound("no such upload (it may have expired)");
      throw error;
    }
  }

  /** Removes an upload once appended; a failure only leaves it to the bucket's expiry. */
  async discard(userId: string, uploadId: string): Promise<void> {
    await this.blobs.delete([uploadKey(userId, Uploads.check(uploadId))]).catch(() => {});
  }

  private static check(uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId)) throw new BadRequest("not an upload id", "invalid_upload_id");
    return uploadId;
  }
}
