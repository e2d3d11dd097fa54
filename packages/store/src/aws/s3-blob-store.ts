/** Blobs as S3 objects in one bucket. */
import { createHash } from "node:crypto";
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  paginateListObjectsV2,
  type S3Client,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { NotFoundError } from "../errors.js";
import type { BlobStore, ObjectInfo } from "../ports.js";
import { type AwsConnection, s3Client } from "./client.js";

const md5 = (body: Uint8Array) => createHash("md5").update(body).digest("base64");

/** The blob port on one S3 bucket (see {@link BlobStore} for the contract). */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;

  constructor(
    connection: AwsConnection,
    private readonly bucket: string,
  ) {
    this.client = s3Client(connection);
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    // Content-MD5: S3 refuses a body that arrived damaged.
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentMD5: md5(body) }));
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Uint8Array> {
    if (range && range.end <= range.start) return new Uint8Array(0);
    try {
      const answer = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Range: range ? `bytes=${range.start}-${range.end - 1}` : undefined,
        }),
      );
      return (await answer.Body?.transformToByteArray()) ?? new Uint8Array(0);
    } catch (error) {
      if (error instanceof NoSuchKey || error instanceof NotFound) throw new NotFoundError(key);
      throw error;
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    // DeleteObjects takes at most 1,000 keys per request.
    for (let i = 0; i < keys.length; i += 1000) {
      const { Errors } = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Quiet: true, Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })) },
        }),
      );
      // A 200 may still list keys it could not delete.
      const failed = Errors?.[0];
      if (failed) throw new Error(`could not delete ${failed.Key}: ${failed.Code} ${failed.Message ?? ""}`.trim());
    }
  }

  async list(prefix: string): Promise<string[]> {
    return (await this.listObjects(prefix)).map((object) => object.key);
  }

  async listObjects(prefix: string): Promise<ObjectInfo[]> {
    const objects: ObjectInfo[] = [];
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: prefix })) {
      for (const { Key, Size, LastModified } of page.Contents ?? []) {
        if (Key !== undefined) objects.push({ key: Key, size: Size ?? 0, modifiedAt: LastModified ?? new Date(0) });
      }
    }
    return objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async uploadUrl(key: string, expiresInSeconds: number, maxBytes: number): Promise<string | undefined> {
    // The length is signed: S3 refuses a body of any other size.
    return getSignedUrl(this.client, new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentLength: maxBytes }), {
      expiresIn: expiresInSeconds,
      signableHeaders: new Set(["content-length"]),
    });
  }
}
