/** Read planning: which ranged GETs fetch a set of lines, within a budget of requests. */
import type { LineRecord } from "@pisync/format";
import type { Segment } from "@pisync/store";

/** One ranged GET: bytes [start, end) of a segment, holding `records`' lines. */
export interface ReadRange {
  segment: Segment;
  start: number;
  end: number;
  records: LineRecord[];
}

/**
 * The ranged GETs that fetch `records` (sorted by offset): one per run of adjacent lines in a
 * segment, so lines that are not wanted (other branches) are not read; when that would take
 * more than `budget` GETs, the runs closest together are merged (reading the few lines between
 * them) until it does not.
 */
export function rangesToRead(
  records: readonly LineRecord[],
  segments: readonly Segment[],
  budget: number,
): ReadRange[] {
  const ranges: ReadRange[] = [];
  for (const segment of segments) {
    let current: ReadRange | undefined;
    for (const r of records) {
      if (r.offset < segment.start || r.offset >= segment.end) continue;
      // The next line starts right after this one's newline: the same run.
      if (current && r.offset === current.end + 1) {
        current.end = r.offset + r.length;
        current.records.push(r);
      } else {
        current = { segment, start: r.offset, end: r.offset + r.length, records: [r] };
        ranges.push(current);
      }
    }
  }
  while (ranges.length > budget) {
    let best = -1;
    for (let i = 0; i + 1 < ranges.length; i++) {
      if (ranges[i].segment !== ranges[i + 1].segment) continue;
      if (best < 0 || ranges[i + 1].start - ranges[i].end < ranges[best + 1].start - ranges[best].end) best = i;
    }
    if (best < 0) break; // one run per segment already: a generation has few segments
    const [a, b] = [ranges[best], ranges[best + 1]];
    ranges.splice(best, 2, { segment: a.segment, start: a.start, end: b.end, records: [...a.records, ...b.records] });
  }
  return ranges;
}
