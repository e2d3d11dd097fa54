/**
 * What a merge of a base's patches does (`replica.ts`): the chunks it rewrites whole and the
 * pages it keeps in one merged patch. Rewriting every chunk a patch touched made a fold past the
 * patches' bounds cost about a thousand chunks at 2 GB, for a few pages of each (new FTS5
 * segments land in free pages scattered over the file); carrying the scattered pages in one
 * patch instead costs their bytes, and a chunk is rewritten only once enough of it is patched
 * that its rewrite retires them for good (as a log-structured file system's cleaner picks its
 * fullest segments).
 */

/** What {@link planMerge} decides from. */
export interface MergeInput {
  /** Pages per chunk. */
  perChunk: number;
  /** Chunks of the file's length now. */
  chunks: number;
  /** Chunks from the first whose old object does not hold its whole range now (the file grew past it): always rewritten. */
  covered: number;
  /** Blocks (0-based) whose bytes are not their chunk object's: patched, written since, or past the chunk objects. */
  patched: Iterable<number>;
  /** A chunk with at least this share of its pages patched is rewritten. */
  denseShare: number;
  /** Pages the merged patch keeps at most: past it, the most patched chunks are rewritten until it fits. */
  maxKeptPages: number;
}

/** The chunks a merge rewrites, and the pages (1-based, ascending) its merged patch keeps. */
export interface MergePlan {
  rewrite: Set<number>;
  kept: number[];
}

/** Plans a merge: the uncovered tail and every dense chunk rewritten, then the most patched ones until the rest fits. */
export function planMerge(input: MergeInput): MergePlan {
  const { perChunk, chunks, covered, denseShare, maxKeptPages } = input;
  const patched = new Set(input.patched); // a block named twice is one page
  const rewrite = new Set<number>();
  for (let chunk = covered; chunk < chunks; chunk++) rewrite.add(chunk);
  const counts = new Map<number, number>();
  for (const block of patched) {
    const chunk = Math.floor(block / perChunk);
    if (!rewrite.has(chunk)) counts.set(chunk, (counts.get(chunk) ?? 0) + 1);
  }
  let left = 0;
  for (const n of counts.values()) left += n;
  // Most patched first (then by place, so that a plan does not depend on the order blocks came in).
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  for (const [chunk, n] of ranked) {
    if (n < denseShare * perChunk && left <= maxKeptPages) break;
    rewrite.add(chunk);
    left -= n;
  }
  const kept: number[] = [];
  for (const block of patched) if (!rewrite.has(Math.floor(block / perChunk))) kept.push(block + 1);
  return { rewrite, kept: kept.sort((a, b) => a - b) };
}
