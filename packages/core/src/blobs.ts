/**
 * Content-addressed blobs, for oh-my-pi's images (kept outside the session file in
 * `<agent>/blobs/<sha256>`, named `blob:sha256:<hex>` in the entries). Each user has their own
 * namespace: a hash never tells whether someone else holds that content.
 */
import { createHash } from "node:crypto";
import { SHA256_HEX } from "@pisync/protocol";
import { type BlobStore, blobKey, NotFoundError, type SessionHead } from "@pisync/store";
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

  /**
   * An image a session names, for a page showing that session: only blobs its lines reference
   * (a share link never reads its owner's other blobs), and only raster images (never SVG or
   * HTML: a blob's bytes are session content). `sessionBytes` is read only for a session whose
   * list of blobs is cut or was kept before lists were.
   * @throws NotFound when the session does not name it, the backup lacks it, or it is no image
   */
  async sessionImage(
    head: SessionHead,
    sha256: string,
    sessionBytes: () => Promise<Uint8Array>,
  ): Promise<{ bytes: Uint8Array; contentType: string }> {
    Blobs.check(sha256);
    const refs = head.summary.blobRefs;
    if (!refs?.includes(sha256)) {
      const listed = refs !== undefined && !head.summary.blobRefsCut;
      const named = !listed && Buffer.from(await sessionBytes()).includes(`blob:sha256:${sha256}`);
      if (!named) throw new NotFound("this session names no such image");
    }
    const bytes = await this.get(head.userId, sha256).catch((error: unknown) => {
      throw error instanceof NotFound ? new NotFound("the image is not in the backup") : error;
    });
    const contentType = rasterType(bytes);
    if (!contentType) throw new NotFound("the blob is not an image");
    return { bytes, contentType };
  }

  /** Checks a blob's name before it reaches a key. @throws BadRequest `invalid_blob_name` */
  static check(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) {
      throw new BadRequest("a blob is named by the hex SHA-256 of its bytes", "invalid_blob_name");
    }
    return sha256;
  }
}

/** A raster image's type by its first bytes (PNG, JPEG, GIF, WebP); undefined for anything else. */
export function rasterType(bytes: Uint8Array): string | undefined {
  const starts = (...b: number[]) => b.every((byte, i) => bytes[i] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (
    starts(0x52, 0x49, 0x46, 0x46) &&
    bytes[8] === 0x57 &&
    bytes[9] === 0x45 &&
    bytes[10] === 0x42 &&
    bytes[11] === 0x50
  ) {
    return "image/webp";
  }
  return undefined;
}
