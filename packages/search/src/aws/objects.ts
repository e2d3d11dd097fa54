/**
 * The objects of a user's index under `search/<user>/` in the bucket, all immutable (a change
 * writes new ones; the sweep removes those nothing names):
 * - `log/<seq>-<nonce>.json.gz`: one change (the batches that applied, or a removal), gzipped JSON;
 * - `chunk/<nonce>`: bytes [n·chunkBytes, (n+1)·chunkBytes) of a base file, a base's hot pages,
 *   or a patch (the pages a compaction found written since, `hot-pages.ts`'s layout);
 * - `base/<seq>-<nonce>.json`: a manifest, which chunks and patches make a base file, in order.
 */
import { randomBytes } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { PREFIXES } from "@pisync/store";
import * as z from "zod/mini";
import type { IndexBatch } from "../port.js";

const nonce = () => randomBytes(6).toString("hex");
const seqHex = (seq: number) => seq.toString(16).padStart(16, "0");

/** Every object of a user's index is under this prefix. */
export const userPrefix = (userId: string) => `${PREFIXES.search}${userId}/`;
export const logKey = (userId: string, seq: number) => `${userPrefix(userId)}log/${seqHex(seq)}-${nonce()}.json.gz`;
export const chunkKey = (userId: string) => `${userPrefix(userId)}chunk/${nonce()}`;
export const manifestKey = (userId: string, seq: number) => `${userPrefix(userId)}base/${seqHex(seq)}-${nonce()}.json`;

/**
 * A change, as the log keeps it: replayed, it does to any copy at the previous change what it
 * did to the writer's. `reads` names the pages (1-based, {@link encodePages}) the writer's SQLite
 * read doing it: a replay on the same file reads the same ones, so it fetches their chunks at
 * once first instead of one miss at a time (a hint: absent in changes written before it existed).
 */
export type Change = ({ apply: IndexBatch[] } | { remove: { userId: string; sessionId: string } }) & {
  reads?: string;
};

/** The change's object. */
export function encodeChange(change: Change): Uint8Array {
  return gzipSync(JSON.stringify(change));
}

/** A change read back (the writer's own encoding: the bucket is ours, not a client's). */
export function decodeChange(bytes: Uint8Array): Change {
  return JSON.parse(gunzipSync(bytes).toString("utf8")) as Change;
}

/** Which chunks make a base file. */
export interface Manifest {
  /** The file's length in bytes. */
  length: number;
  /** SQLite's page size in the file (a block of the sparse copy). */
  pageBytes: number;
  /** Bytes per chunk (a multiple of the page size); the last chunk may be shorter. */
  chunkBytes: number;
  /** The chunk objects, in order. */
  chunks: string[];
  /**
   * The object of the pages every query reads (`hot-pages.ts`), under a chunk's key: fetched
   * with the first chunk by a fresh reader. Absent in manifests written before it existed.
   */
  hot?: string;
  /** Bytes of the file the chunks hold, when patches made it longer since (absent: {@link length}). */
  chunked?: number;
  /** Pages written since the chunks were, oldest patch first: a page's bytes are its last patch's, else its chunk's. */
  patches?: Patch[];
}

/**
 * The pages a compaction found written since the chunks (and the patches before it): uploading
 * them, not their whole chunks, makes a compaction's upload follow what changed.
 */
export interface Patch {
  /** The object of the pages (the hot pages' layout: a count, the page numbers, the pages). */
  key: string;
  /** Its pages, 1-based and ascending, as runs ({@link encodePages}). */
  pages: string;
  /** The object of those of its pages that are hot (the same layout): a fresh reader fetches it with the base's. */
  hot?: string;
  /** Bytes of the object. */
  bytes: number;
}

// Strict: a manifest of a later format (a field this code does not know) is refused, not read as if its pages were where this code looks.
const ManifestSchema = z.strictObject({
  length: z.int().check(z.minimum(0)),
  pageBytes: z.int().check(z.minimum(512)),
  chunkBytes: z.int().check(z.minimum(512)),
  chunks: z.array(z.string()),
  hot: z.optional(z.string()),
  chunked: z.optional(z.int().check(z.minimum(0))),
  patches: z.optional(
    z.array(
      z.strictObject({
        key: z.string(),
        pages: z.string(),
        hot: z.optional(z.string()),
        bytes: z.int().check(z.minimum(0)),
      }),
    ),
  ),
});

/** Ascending page numbers as runs, `first[-last]` in base 36, comma-separated (a compaction's pages cluster). */
export function encodePages(pages: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < pages.length; ) {
    let j = i;
    while (j + 1 < pages.length && (pages[j + 1] as number) === (pages[j] as number) + 1) j++;
    const first = (pages[i] as number).toString(36);
    runs.push(j > i ? `${first}-${(pages[j] as number).toString(36)}` : first);
    i = j + 1;
  }
  return runs.join(",");
}

/** The pages {@link encodePages} wrote. @throws on a malformed list */
export function decodePages(text: string): number[] {
  const pages: number[] = [];
  if (text === "") return pages;
  for (const run of text.split(",")) {
    const [first, last = first] = run.split("-").map((n) => Number.parseInt(n, 36));
    if (
      !/^[0-9a-z]+(-[0-9a-z]+)?$/.test(run) ||
      !Number.isSafeInteger(first) ||
      !Number.isSafeInteger(last) ||
      (first as number) < 1 ||
      (last as number) < (first as number)
    ) {
      throw new Error(`a malformed run of pages: ${run}`);
    }
    for (let n = first as number; n <= (last as number); n++) pages.push(n);
  }
  return pages;
}

export function encodeManifest(manifest: Manifest): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(manifest));
}

export function decodeManifest(bytes: Uint8Array): Manifest {
  return ManifestSchema.parse(JSON.parse(new TextDecoder().decode(bytes)));
}
