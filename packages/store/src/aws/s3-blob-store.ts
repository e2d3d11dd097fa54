/** Blobs as S3 objects in one bucket, over S3's REST API. */
import { createHash } from "node:crypto";
import { NotFoundError } from "../errors.js";
import type { BlobStore } from "../ports.js";
import { type AwsConnection, AwsError, send, serviceEndpoint, sign } from "./client.js";

const md5 = (body: string | Uint8Array) => createHash("md5").update(body).digest("base64");

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
function xmlText(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (entity, name: string) => {
    if (name[0] !== "#") return ENTITIES[name] ?? entity;
    return String.fromCodePoint(name[1] === "x" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1)));
  });
}
const xmlEscape = (text: string) => text.replace(/[&<>"'\r\n]/g, (c) => `&#${c.charCodeAt(0)};`);

/** Every `<tag>…</tag>` value in an XML answer (S3's answers are flat enough for this). */
function xmlValues(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, "g"))].map((m) => xmlText(m[1] as string));
}

/** Throws an S3 error answer as an AwsError (its XML `<Code>`, or the status for bodiless answers). */
async function check(response: Response): Promise<Response> {
  if (response.ok) return response;
  const xml = await response.text().catch(() => "");
  const code = xmlValues(xml, "Code")[0] ?? (response.status === 404 ? "NotFound" : `Http${response.status}`);
  throw new AwsError(code, xmlValues(xml, "Message")[0] ?? response.statusText, response.status);
}

export class S3BlobStore implements BlobStore {
  constructor(
    private readonly connection: AwsConnection,
    private readonly bucket: string,
  ) {}

  /** The bucket's URL (with a trailing slash), path-style or virtual-hosted. */
  private bucketUrl(): URL {
    const url = serviceEndpoint(this.connection, "s3");
    if (this.connection.s3PathStyle) url.pathname = `${url.pathname.replace(/\/$/, "")}/${this.bucket}/`;
    else url.hostname = `${this.bucket}.${url.hostname}`;
    return url;
  }

  private objectUrl(key: string): URL {
    return new URL(key.split("/").map(encodeURIComponent).join("/"), this.bucketUrl());
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    // Content-MD5: S3 refuses a body that arrived damaged.
    await send(
      this.connection,
      "s3",
      this.objectUrl(key),
      { method: "PUT", headers: { "content-md5": md5(body) }, body },
      // The (empty) answer is read to its end: fetch reuses a connection only then.
      async (response) => void (await (await check(response)).arrayBuffer()),
    );
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Uint8Array> {
    if (range && range.end <= range.start) return new Uint8Array(0);
    const headers: Record<string, string> = range ? { range: `bytes=${range.start}-${range.end - 1}` } : {};
    try {
      return await send(this.connection, "s3", this.objectUrl(key), { method: "GET", headers }, async (response) => {
        await check(response);
        return new Uint8Array(await response.arrayBuffer());
      });
    } catch (error) {
      if (error instanceof AwsError && (error.status === 404 || error.code === "NoSuchKey")) {
        throw new NotFoundError(key);
      }
      throw error;
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    // DeleteObjects takes at most 1,000 keys per request.
    for (let i = 0; i < keys.length; i += 1000) {
      const objects = keys
        .slice(i, i + 1000)
        .map((key) => `<Object><Key>${xmlEscape(key)}</Key></Object>`)
        .join("");
      const body = `<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>${objects}</Delete>`;
      const url = this.bucketUrl();
      url.search = "delete";
      const xml = await send(
        this.connection,
        "s3",
        url,
        { method: "POST", headers: { "content-type": "application/xml", "content-md5": md5(body) }, body },
        async (response) => (await check(response)).text(),
      );
      // A 200 may still list keys it could not delete.
      const failed = xml.match(/<Error>[\s\S]*?<\/Error>/);
      if (failed) {
        const code = xmlValues(failed[0], "Code")[0] ?? "DeleteFailed";
        throw new AwsError(code, `could not delete ${xmlValues(failed[0], "Key")[0]}`, 200);
      }
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const url = this.bucketUrl();
      url.searchParams.set("list-type", "2");
      url.searchParams.set("prefix", prefix);
      if (token) url.searchParams.set("continuation-token", token);
      const xml = await send(this.connection, "s3", url, { method: "GET" }, async (r) => (await check(r)).text());
      keys.push(...xmlValues(xml, "Key"));
      token = xmlValues(xml, "IsTruncated")[0] === "true" ? xmlValues(xml, "NextContinuationToken")[0] : undefined;
    } while (token);
    return keys.sort();
  }

  async uploadUrl(key: string, expiresInSeconds: number, maxBytes: number): Promise<string | undefined> {
    const url = this.objectUrl(key);
    url.searchParams.set("X-Amz-Expires", String(expiresInSeconds));
    // The length is signed: S3 refuses a body of any other size.
    const signed = await sign(this.connection, "s3", url, {
      method: "PUT",
      headers: { "content-length": String(maxBytes) },
      query: true,
    });
    return signed.url.toString();
  }
}
