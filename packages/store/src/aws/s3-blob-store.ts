/** Blobs as S3 objects in one bucket. */
import { createHash } from "node:crypto";
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  paginateListObjectsV2,
  type S3Client,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { NotFoundError, StorageUnavailableError } from "../errors.js";
import type { BlobStore, ObjectInfo } from "../ports.js";
import { type AwsConnection, awsErrorName, s3Client } from "./client.js";

const md5 = (body: Uint8Array) => createHash("md5").update(body).digest("base64");

/** The codes of a DeleteObjects answer's failed keys that say S3 was failing or busy, not that it refused. */
const TRANSIENT_CODES = new Set(["InternalError", "ServiceUnavailable", "SlowDown", "RequestTimeout"]);

/** Reads of an object whose answer's body broke off or came short, the first included. */
const BODY_ATTEMPTS = 2;

/**
 * The bytes of `range` in an answer's body of `body.length` bytes, or why they are not there:
 * fewer bytes than its `Content-Length`, or a range answer that stops before the end asked for
 * while the object goes on (`Content-Range: bytes first-last/size`), or a part (206) that does
 * not say which. A body that covers more than was asked for (the whole object, from a server that
 * ignored or misread the range) is cut to it.
 */
function partAsked(
  body: Uint8Array,
  answer: Pick<GetObjectCommandOutput, "ContentLength" | "ContentRange" | "$metadata">,
  range: { start: number; end: number } | undefined,
): { bytes: Uint8Array } | { problem: string } {
  if (answer.ContentLength !== undefined && body.length !== answer.ContentLength) {
    return { problem: `${body.length} bytes of the ${answer.ContentLength} its Content-Length announced` };
  }
  if (!range) return { bytes: body };
  const served = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(answer.ContentRange ?? "");
  if (!served && answer.$metadata.httpStatusCode !== 200) {
    return { problem: `a part without a readable Content-Range (${answer.ContentRange ?? "none"})` };
  }
  // A 200 is the whole object.
  const first = served ? Number(served[1]) : 0;
  const size = served ? (served[3] === "*" ? Number.POSITIVE_INFINITY : Number(served[3])) : body.length;
  const end = Math.min(range.end, size);
  if (first > range.start || first + body.length < end) {
    const asked = `bytes ${range.start}-${range.end - 1}`;
    return {
      problem: `${served ? `bytes ${served[1]}-${served[2]}` : "the object"} (${body.length} bytes) for ${asked}`,
    };
  }
  return { bytes: body.subarray(range.start - first, Math.max(range.start, end) - first) };
}

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

  /**
   * The object's bytes, or those of `range` (fewer when the object ends first).
   * @throws NotFoundError when there is no such object
   * @throws StorageUnavailableError when S3 did not answer, or its answer's body failed or came
   *   short twice: the SDK's retries end with the answer's headers, and its body is read after
   */
  async get(key: string, range?: { start: number; end: number }): Promise<Uint8Array> {
    if (range && range.end <= range.start) return new Uint8Array(0);
    for (let attempt = 1; ; attempt++) {
      let answer: GetObjectCommandOutput;
      try {
        answer = await this.client.send(
          new GetObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Range: range ? `bytes=${range.start}-${range.end - 1}` : undefined,
          }),
        );
      } catch (error) {
        if (error instanceof NoSuchKey || error instanceof NotFound) throw new NotFoundError(key);
        // 416: the range starts at or past the object's end, where it has no bytes.
        if (range && awsErrorName(error) === "InvalidRange") return new Uint8Array(0);
        throw error;
      }
      let problem: string;
      try {
        const part = partAsked((await answer.Body?.transformToByteArray()) ?? new Uint8Array(0), answer, range);
        if ("bytes" in part) return part.bytes;
        problem = part.problem;
      } catch (error) {
        // A body that breaks off or falls silent: the connection, not the request, failed.
        problem = (error as Error).message;
      }
      // A read changes nothing: asking again is safe.
      if (attempt >= BODY_ATTEMPTS) {
        throw new StorageUnavailableError(`the storage service's answer for ${key} was cut short: ${problem}`);
      }
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
      // A 200 may still list keys it could not delete: S3 failing or busy is an outage, the rest a refusal.
      const failed = Errors?.[0];
      if (failed) {
        const message = `could not delete ${failed.Key}: ${failed.Code} ${failed.Message ?? ""}`.trim();
        if (TRANSIENT_CODES.has(failed.Code ?? "")) throw new StorageUnavailableError(message);
        throw new Error(message);
      }
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
