/** Blobs as S3 objects in one bucket. */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { NotFoundError } from "../errors.js";
import type { BlobStore } from "../ports.js";

export class S3BlobStore implements BlobStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: Uint8Array): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length }));
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Uint8Array> {
    if (range && range.end <= range.start) return new Uint8Array(0);
    try {
      const result = await this.s3.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Range: range ? `bytes=${range.start}-${range.end - 1}` : undefined,
        }),
      );
      return result.Body ? await result.Body.transformToByteArray() : new Uint8Array(0);
    } catch (error) {
      if (error instanceof NoSuchKey || (error instanceof S3ServiceException && error.name === "NoSuchKey")) {
        throw new NotFoundError(key);
      }
      if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404) throw new NotFoundError(key);
      throw error;
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    // DeleteObjects takes at most 1,000 keys per request.
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      await this.s3.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async uploadUrl(key: string, expiresInSeconds: number, maxBytes: number): Promise<string | undefined> {
    // The length is signed: S3 refuses a body of any other size.
    return getSignedUrl(this.s3, new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentLength: maxBytes }), {
      expiresIn: expiresInSeconds,
    });
  }
}
