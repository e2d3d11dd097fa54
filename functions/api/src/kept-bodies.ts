/**
 * Answers kept with their gzip, by what they show: a share's page and tree are the same for
 * every reader of one version of the session, so they are made and compressed once (a 20,000-
 * entry tree takes longer to gzip than to build) and served as bytes afterwards.
 */
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { Memo } from "@pisync/core";
import type { Context } from "hono";

const gzipAsync = promisify(gzip);

/** A body as text and gzipped. */
export interface KeptBody {
  text: string;
  gzip: Uint8Array;
}

/** Whether the client takes gzip (a q of 0 refuses it). */
function acceptsGzip(c: Context): boolean {
  const header = c.req.header("Accept-Encoding") ?? "";
  return header.split(",").some((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return (name === "gzip" || name === "*") && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/**
 * Bodies by key, at most `count` of them and `maxBytes` in all (text and gzip); requests for a
 * body being made share its making.
 */
export class KeptBodies {
  private readonly memo: Memo<KeptBody>;

  constructor(count: number, maxBytes: number) {
    this.memo = new Memo(count, maxBytes, (body) => body.text.length * 2 + body.gzip.length);
  }

  /** The body of `key`, made by `make` unless kept. */
  get(key: string, make: () => Promise<string>): Promise<KeptBody> {
    return this.memo.get(key, async () => {
      const text = await make();
      return { text, gzip: new Uint8Array(await gzipAsync(text)) };
    });
  }

  /** An answer with `body`: gzipped to clients that take it. */
  static respond(c: Context, body: KeptBody, contentType: string): Response {
    c.header("Vary", "Accept-Encoding");
    if (!acceptsGzip(c)) return c.body(body.text, 200, { "Content-Type": contentType });
    return c.body(body.gzip as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": contentType,
      "Content-Encoding": "gzip",
    });
  }
}
