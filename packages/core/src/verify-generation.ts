/**
 * The checks of one stored generation against its bytes: the segments its state lists (present,
 * sized as their ranges, contiguous from 0 to its length, keyed by their own range), and, when
 * the bytes are read, whole lines, the line count and the tree's index pages.
 */
import { forEachLine, type LineSpan } from "@pisync/format";
import {
  type BlobStore,
  type GenerationState,
  type IndexPage,
  NotFoundError,
  type ObjectInfo,
  parseSegmentKey,
} from "@pisync/store";
import { readRange } from "./segments.js";

/** What is wrong with one generation: a kind, a message, and the object it is about. */
export interface GenerationProblem {
  kind: "missing-object" | "size-mismatch" | "bad-segments" | "partial-line" | "line-count" | "bad-page";
  message: string;
  key?: string;
}

/** Whether an object the listing did not show is really missing (it may have been written since). */
async function missing(blobs: BlobStore, key: string): Promise<boolean> {
  try {
    await blobs.get(key, { start: 0, end: 1 });
    return false;
  } catch (error) {
    if (error instanceof NotFoundError) return true;
    throw error;
  }
}

/**
 * Checks a generation's segment list against the listed objects (`listed`: by key), without
 * reading bytes. @returns its problems (none: every byte of it is stored where it says)
 */
export async function checkSegments(
  blobs: BlobStore,
  at: { userId: string; sessionId: string },
  state: GenerationState,
  listed: ReadonlyMap<string, ObjectInfo>,
): Promise<GenerationProblem[]> {
  const problems: GenerationProblem[] = [];
  const label = `generation ${state.generation}`;
  let end = 0;
  for (const segment of state.segments) {
    if (segment.start !== end) {
      problems.push({
        kind: "bad-segments",
        message: `${label}: a segment starts at ${segment.start}, not at ${end} where the one before ends`,
        key: segment.key,
      });
    }
    end = segment.end;
    const parsed = parseSegmentKey(segment.key);
    if (
      !parsed ||
      parsed.userId !== at.userId ||
      parsed.sessionId !== at.sessionId ||
      parsed.generation !== state.generation ||
      parsed.start !== (segment.base ?? segment.start) ||
      parsed.end !== segment.end
    ) {
      problems.push({
        kind: "bad-segments",
        message: `${label}: the key of segment [${segment.start}, ${segment.end}) names another range or session`,
        key: segment.key,
      });
    }
    const object = listed.get(segment.key);
    if (!object) {
      if (await missing(blobs, segment.key)) {
        problems.push({
          kind: "missing-object",
          message: `${label}: bytes [${segment.start}, ${segment.end}) are in no stored object`,
          key: segment.key,
        });
      }
    } else if (object.size !== segment.end - (segment.base ?? segment.start)) {
      problems.push({
        kind: "size-mismatch",
        message: `${label}: segment [${segment.start}, ${segment.end}) holds ${object.size} bytes, not ${segment.end - (segment.base ?? segment.start)}`,
        key: segment.key,
      });
    }
  }
  if (end !== state.length) {
    problems.push({
      kind: "bad-segments",
      message: `${label}: its segments end at ${end}, its length is ${state.length}`,
    });
  }
  return problems;
}

/** Checks the pages of a generation against its lines. */
function checkPages(label: string, pages: readonly IndexPage[], spans: readonly LineSpan[], length: number) {
  const problems: GenerationProblem[] = [];
  let end = 0;
  for (const page of pages) {
    const range = `${label}: the index page [${page.start}, ${page.end})`;
    if (page.start < end || page.end < page.start || page.end > length) {
      problems.push({ kind: "bad-page", message: `${range} overlaps another or lies past ${length}` });
    }
    end = Math.max(end, page.end);
    for (const record of page.records) {
      const span = spans[record.line - 1];
      if (record.offset < page.start || record.offset >= page.end) {
        problems.push({
          kind: "bad-page",
          message: `${range} holds line ${record.line} at ${record.offset}, outside it`,
        });
      } else if (!span || span.offset !== record.offset || span.length !== record.length) {
        problems.push({
          kind: "bad-page",
          message: `${range}: line ${record.line} is not at [${record.offset}, ${record.offset + record.length}) in the bytes`,
        });
      }
    }
  }
  return problems;
}

/**
 * Reads a generation's bytes and checks them: a whole number of lines, as many as its state
 * counts, and index pages whose records are those lines. Call it only on a generation whose
 * segments passed {@link checkSegments}.
 */
export async function checkBytes(
  blobs: BlobStore,
  state: GenerationState,
  pages: readonly IndexPage[],
): Promise<GenerationProblem[]> {
  const label = `generation ${state.generation}`;
  const bytes = await readRange(blobs, state.segments, 0, state.length);
  const spans: LineSpan[] = [];
  const complete = forEachLine(bytes, (span) => spans.push(span));
  const problems: GenerationProblem[] = [];
  if (complete !== state.length) {
    problems.push({
      kind: "partial-line",
      message: `${label}: its ${state.length} bytes end ${state.length - complete} bytes into a line`,
    });
  }
  if (spans.length !== state.lines) {
    problems.push({
      kind: "line-count",
      message: `${label}: its bytes hold ${spans.length} lines, its head says ${state.lines}`,
    });
  }
  return [...problems, ...checkPages(label, pages, spans, state.length)];
}
