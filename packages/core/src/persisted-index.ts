/**
 * Persisted tree indexes: the index pages of bytes [0, n) of a generation, merged into one object
 * beside the session's bytes, so that a fresh instance reads one object (and the pages appended
 * since n) instead of every page of a large session. They are derived data: one that is missing,
 * stale, corrupt or of another session is never served, the pages are read instead.
 *
 * An object is gzip'd JSON: a header line (whose session, generation, length and SHA-256 of the
 * body are checked against the head asking) and the body: the records as columns (see
 * index-columns.ts), the problems, and the previews.
 */
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import type { LineRecord, Problem } from "@pisync/format";
import {
  type GenerationState,
  type IndexPage,
  NotFoundError,
  parsePersistedIndexKey,
  persistedIndexKey,
  persistedIndexPrefix,
  type SessionHead,
  type Stores,
  sessionLifeIndexPrefix,
} from "@pisync/store";
import * as z from "zod/mini";
import { fromColumns, type RecordColumns, toColumns } from "./index-columns.js";

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** Sessions of fewer lines than this are read from their pages: one query beats a listing and a read. */
export const PERSIST_MIN_LINES = 2_000;

/** The merged pages of bytes [0, length) of a generation. */
export interface MergedPages {
  length: number;
  records: LineRecord[];
  problems: Problem[];
  previews: Record<number, string>;
}

/** Which session version an index belongs to: all of it is checked before an index is used. */
export interface IndexOwner {
  userId: string;
  sessionId: string;
  sessionCreatedAt: string;
  generation: number;
  generationCreatedAt: string;
}

const FORMAT = "pisync-tree-index";

const Header = z.object({
  format: z.literal(FORMAT),
  version: z.literal(1),
  userId: z.string(),
  sessionId: z.string(),
  sessionCreatedAt: z.string(),
  generation: z.int().check(z.nonnegative()),
  generationCreatedAt: z.string(),
  length: z.int().check(z.nonnegative()),
  records: z.int().check(z.nonnegative()),
  sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
});

/** The owner of a generation of a head. */
export function ownerOf(head: SessionHead, state: GenerationState): IndexOwner {
  return {
    userId: head.userId,
    sessionId: head.sessionId,
    sessionCreatedAt: head.createdAt,
    generation: state.generation,
    generationCreatedAt: state.createdAt,
  };
}

/** Where the index of `owner` at `length` is kept. */
export function keyOf(owner: IndexOwner, length: number): string {
  return persistedIndexKey(owner.userId, owner.sessionId, createdMs(owner), owner.generation, length);
}

const createdMs = (owner: IndexOwner) => Math.max(0, Date.parse(owner.sessionCreatedAt) || 0);

/** The previews as a column beside the records (by their position), and those of no record's line. */
function previewColumn(records: readonly LineRecord[], previews: Record<number, string>) {
  const column: (string | null)[] = records.map((r) => previews[r.line] ?? null);
  const lines = new Set(records.map((r) => r.line));
  const other: Record<number, string> = {};
  for (const [line, preview] of Object.entries(previews)) if (!lines.has(Number(line))) other[Number(line)] = preview;
  return { column, other };
}

/** The object holding `pages` as the index of `owner`. */
export async function encodeIndex(owner: IndexOwner, pages: MergedPages): Promise<Uint8Array> {
  const previews = previewColumn(pages.records, pages.previews);
  const body = Buffer.from(
    JSON.stringify({
      columns: toColumns(pages.records),
      problems: pages.problems,
      previews: previews.column,
      otherPreviews: previews.other,
    }),
  );
  const sha256 = createHash("sha256").update(body).digest("hex");
  const header: z.infer<typeof Header> = {
    format: FORMAT,
    version: 1,
    ...owner,
    length: pages.length,
    records: pages.records.length,
    sha256,
  };
  return gzipAsync(Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]));
}

/**
 * The pages an object holds when it is the intact index of `owner` (at most `maxLength` long);
 * undefined for anything else: garbage, a torn or altered object, another user's or session's,
 * another life or generation of this one. Throws nothing.
 */
export async function decodeIndex(bytes: Uint8Array, owner: IndexOwner, maxLength: number) {
  try {
    // Bytes, not text, until the body is parsed: the checksum is of the bytes as written.
    const all = await gunzipAsync(bytes);
    const newline = all.indexOf(10);
    if (newline < 0) return undefined;
    const header = Header.safeParse(JSON.parse(all.subarray(0, newline).toString("utf8")));
    if (!header.success) return undefined;
    const h = header.data;
    if (
      h.userId !== owner.userId ||
      h.sessionId !== owner.sessionId ||
      h.sessionCreatedAt !== owner.sessionCreatedAt ||
      h.generation !== owner.generation ||
      h.generationCreatedAt !== owner.generationCreatedAt ||
      h.length > maxLength
    ) {
      return undefined;
    }
    const body = all.subarray(newline + 1);
    if (createHash("sha256").update(body).digest("hex") !== h.sha256) return undefined;
    const parsed = JSON.parse(body.toString("utf8")) as {
      columns: RecordColumns;
      problems: Problem[];
      previews: (string | null)[];
      otherPreviews: Record<number, string>;
    };
    const records = fromColumns(parsed.columns);
    const { problems } = parsed;
    if (!records || records.length !== h.records || !Array.isArray(problems)) return undefined;
    if (!Array.isArray(parsed.previews) || parsed.previews.length !== records.length) return undefined;
    if (!inOrder(records, h.length)) return undefined;
    const previews: Record<number, string> = {};
    for (const [line, preview] of Object.entries(parsed.otherPreviews ?? {})) previews[Number(line)] = String(preview);
    parsed.previews.forEach((preview, i) => {
      if (typeof preview === "string") previews[(records[i] as LineRecord).line] = preview;
    });
    return { length: h.length, records, problems, previews } satisfies MergedPages;
  } catch {
    return undefined;
  }
}

/** Whether records are lines in file order, each inside [0, length). */
function inOrder(records: readonly LineRecord[], length: number): boolean {
  let end = 0;
  let line = 0;
  for (const r of records) {
    if (typeof r !== "object" || r === null) return false;
    if (!Number.isInteger(r.offset) || !Number.isInteger(r.length) || !Number.isInteger(r.line)) return false;
    if (r.offset < end || r.line <= line || r.offset + r.length + 1 > length) return false;
    end = r.offset + r.length + 1;
    line = r.line;
  }
  return true;
}

/** The merge of a generation's pages (in byte order) up to `length`. */
export function mergePages(pages: readonly IndexPage[], length: number, into?: MergedPages): MergedPages {
  const merged: MergedPages = into ?? { length: 0, records: [], problems: [], previews: {} };
  for (const page of pages) {
    if (page.start >= length) continue;
    for (const record of page.records) merged.records.push(record);
    for (const problem of page.problems) merged.problems.push(problem);
    Object.assign(merged.previews, page.previews ?? {});
  }
  merged.length = length;
  return merged;
}

/**
 * Whether a fresh reader that found `found` and read `appended` records from the pages since
 * should write the index again: when there was none (or it was unusable), or when the pages it
 * had to read are many (a quarter of what it held, and at least a thousand).
 */
export function worthPersisting(found: Found, appended: number): boolean {
  if (!found.pages) return true;
  return appended >= Math.max(1_000, found.pages.records.length / 4);
}

/** What {@link PersistedIndexes.find} answers. */
export interface Found {
  /** The intact index found, if one was. */
  pages?: MergedPages;
  /** The key read, whether it was intact or not; undefined when there was none to read. */
  key?: string;
  /** Every index of the generation listed (the longest usable one first read). */
  keys: string[];
}

/**
 * Reads and writes the persisted indexes of sessions' generations through the blob port. Every
 * key is made from the head asking (its user, session, life and generation), and every object
 * read is checked against it: no reader ever sees another user's or another version's index.
 */
export class PersistedIndexes {
  constructor(private readonly stores: Stores) {}

  /** The longest persisted index of `owner`'s generation that is no longer than `length`, if intact. */
  async find(owner: IndexOwner, length: number): Promise<Found> {
    const keys = await this.list(owner);
    const usable = keys.filter((key) => (parsePersistedIndexKey(key)?.length ?? Infinity) <= length);
    const key = usable.at(-1);
    if (!key) return { keys };
    try {
      const pages = await decodeIndex(await this.stores.blobs.get(key), owner, length);
      return { pages, key, keys };
    } catch (error) {
      // Removed meanwhile (a newer one replaced it): as if there were none.
      if (error instanceof NotFoundError) return { keys };
      throw error;
    }
  }

  /** The keys of every generation of `head`'s life of its session (not of a session made again under its id). */
  async listLife(head: SessionHead): Promise<string[]> {
    const created = createdMs(ownerOf(head, head.current));
    return this.stores.blobs.list(sessionLifeIndexPrefix(head.userId, head.sessionId, created));
  }

  /** The keys of `owner`'s generation, shortest first. */
  async list(owner: IndexOwner): Promise<string[]> {
    const prefix = persistedIndexPrefix(owner.userId, owner.sessionId, createdMs(owner), owner.generation);
    return (await this.stores.blobs.list(prefix)).filter((key) => parsePersistedIndexKey(key)).sort();
  }

  /** Writes `pages` as `owner`'s index, then removes the shorter ones `replaced` lists (the new one serves their readers). */
  async save(owner: IndexOwner, pages: MergedPages, replaced: readonly string[] = []): Promise<string> {
    const key = keyOf(owner, pages.length);
    await this.stores.blobs.put(key, await encodeIndex(owner, pages));
    const older = replaced.filter((k) => k !== key && (parsePersistedIndexKey(k)?.length ?? 0) < pages.length);
    if (older.length) await this.stores.blobs.delete(older);
    return key;
  }
}
