/**
 * Content-addressed blobs, for oh-my-pi's images (kept outside the session file in
 * `<agent>/blobs/<sha256>`, named `blob:sha256:<hex>` in the entries). Each user has their own
 * namespace: a hash never tells whether someone else holds that content.
 */
import { createHash } from "node:crypto";
import { SHA256_HEX } from "@pisync/protocol";
import { type BlobStore, blobKey, NotFoundError } from "@pisync/store";
import { BadRequest, NotFound } from "./errors.js";

/** A user's blobs by the hex SHA-256 of their bytes. */
export class Blobs {
  constructor(private readonly blobs: BlobStore) {}

  /** The blob's bytes. @throws NotFound; BadRequest `invalid_blob_name` */
  async get(userId: string, sha256: string): Promise<Uint8Array> {
    try {
      return await this.blobs.get(blobKey(userId, Blobs.check(sha256)));
    } catch (error) {
      if (error instanceof NotFoundError) throw new NotFound("no such blob");
      throw error;
    }
  }

  /** Stores a blob whose bytes hash to its name. @throws BadRequest `invalid_blob_name`, `blob_hash_mismatch` */
  async put(userId: string, sha256: string, bytes: Uint8Array): Promise<void> {
    Blobs.check(sha256);
    if (createHash("sha256").update(bytes).digest("hex") !== sha256) {
      throw new BadRequest("the body's SHA-256 is not the blob's name", "blob_hash_mismatch");
    }
    await this.blobs.put(blobKey(userId, sha256), bytes);
  }

  /** Checks a blob's name before it reaches a key. @throws BadRequest `invalid_blob_name` */
  static check(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) {
      throw new BadRequest("a blob is named by the hex SHA-256 of its bytes", "invalid_blob_name");
    }
    return sha256;
  }
}
