/**
 * A generation's bytes live in a few segment objects listed by its head. Reads fetch only the
 * segments (and ranges) they need; after appends, small neighbouring segments are merged so
 * that a generation never has more than {@link MAX_SEGMENTS} (reading one costs at most that
 * many GETs, however many appends built it).
 */
import { randomBytes } from "node:crypto";
import {
  type BlobStore,
  type GenerationState,
  NotFoundError,
  type Segment,
  StorageUnavailableError,
} from "@pisync/store";

/** A generation holds at most this many segments after an append. */
export const MAX_SEGMENTS = 8;
/** Merging brings it down to this many, so that merges stay rare. */
const MERGE_DOWN_TO = 5;

/** 12 random hex digits: makes a segment's key unique, so a retried write never overwrites another. */
export function nonce(): string {
  return randomBytes(6).toString("hex");
}

/** Reads of a head's segments tried at most this many times, each with a head read afresh. */
const READ_TRIES = 3;

/**
 * `read` with a head from `load`, read again when a segment it names is gone: objects no head
 * names any more are removed by the sweep, so a head read long enough ago may name one.
 */
export async function withFreshHead<H, T>(load: () => Promise<H>, read: (head: H) => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await read(await load());
    } catch (error) {
      if (!(error instanceof NotFoundError) || tries >= READ_TRIES) throw error;
    }
  }
}

/**
 * Bytes [start, end) of a generation, fetched with one ranged GET per segment it spans.
 * @throws StorageUnavailableError when a segment's answer is shorter than the segment says (a
 * cut answer): its missing bytes would otherwise read as zeros, and a merge would store them.
 */
export async function readRange(
  blobs: BlobStore,
  segments: readonly Segment[],
  start: number,
  end: number,
): Promise<Uint8Array> {
  const parts = segments.filter((s) => s.end > start && s.start < end);
  const chunks = await Promise.all(
    parts.map((s) => {
      // A segment may serve the tail of its object (see Segment.base): offsets within the object.
      const base = s.base ?? s.start;
      const from = Math.max(start, s.start) - base;
      const to = Math.min(end, s.end) - base;
      return base === s.start && from === 0 && to === s.end - s.start
        ? blobs.get(s.key)
        : blobs.get(s.key, { start: from, end: to });
    }),
  );
  const out = new Uint8Array(Math.max(0, end - start));
  let at = 0;
  for (const [i, chunk] of chunks.entries()) {
    const s = parts[i] as Segment;
    const wanted = Math.min(end, s.end) - Math.max(start, s.start);
    if (chunk.length !== wanted) {
      throw new StorageUnavailableError(`segment ${s.key} answered ${chunk.length} of ${wanted} bytes`);
    }
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** Whether `body` equals the committed bytes at [offset, offset + body.length). */
export async function sameBytes(blobs: BlobStore, state: GenerationState, offset: number, body: Uint8Array) {
  const stored = await readRange(blobs, state.segments, offset, offset + body.length);
  if (stored.length !== body.length) return false;
  for (let i = 0; i < body.length; i++) if (stored[i] !== body[i]) return false;
  return true;
}

/**
 * The run of adjacent segments to merge so that at most {@link MERGE_DOWN_TO} remain: the
 * run with the fewest bytes (so big, old segments are rarely rewritten). `undefined` when the
 * generation has few enough.
 */
export function mergePlan(segments: readonly Segment[]): { from: number; to: number } | undefined {
  if (segments.length <= MAX_SEGMENTS) return undefined;
  const width = segments.length - MERGE_DOWN_TO + 1;
  let best: { from: number; to: number; bytes: number } | undefined;
  for (let from = 0; from + width <= segments.length; from++) {
    const run = segments.slice(from, from + width);
    const bytes = run.reduce((sum, s) => sum + (s.end - s.start), 0);
    if (!best || bytes <= best.bytes) best = { from, to: from + width, bytes };
  }
  return best && { from: best.from, to: best.to };
}
