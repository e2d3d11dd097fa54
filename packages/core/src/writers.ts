/**
 * Who wrote what: each commit records, in the same head write as its bytes, which device (the
 * public id of the token that sent them) appended them, as runs `{ offset, device }` per
 * generation. A merge of two machines' lines is one append by one of them, so a session written
 * on two machines shows a run per machine's stretch of bytes.
 */
import type { TokenRecord, WriterRun } from "@pisync/store";

/**
 * Runs a generation keeps. Past it the oldest runs are dropped: bytes before the first run kept
 * are of an unknown device (as in a generation committed before runs were kept).
 */
export const MAX_WRITER_RUNS = 256;

/** What a run's device is called when its token was revoked since. */
export const REMOVED_DEVICE = "removed device";
/** What a run's device is called when the request named none. */
export const UNKNOWN_DEVICE = "unknown device";

/**
 * The runs after `device` appended bytes at `offset` (the generation's committed length before
 * them): the last run grows when it is the same device's, else a run starts.
 */
export function advanceWriters(runs: readonly WriterRun[] | undefined, offset: number, device: string): WriterRun[] {
  const kept = runs ?? [];
  if (kept.at(-1)?.device === device) return [...kept];
  const next = [...kept, { offset, device }];
  return next.length > MAX_WRITER_RUNS ? next.slice(next.length - MAX_WRITER_RUNS) : next;
}

/** A run as the owner's API answers it: the device's name instead of its token id. */
export type WriterView = { offset: number; device: string };

/**
 * The runs with each device named by the owner's tokens (`tokens`: `userId`'s, so no other
 * user's names can appear); `undefined` when the generation kept none.
 */
export function writersView(runs: readonly WriterRun[] | undefined, tokens: readonly TokenRecord[]) {
  if (!runs || runs.length === 0) return undefined;
  const names = new Map(tokens.map((t) => [t.id, t.name]));
  return runs.map(
    (run): WriterView => ({
      offset: run.offset,
      device: run.device === "" ? UNKNOWN_DEVICE : (names.get(run.device) ?? REMOVED_DEVICE),
    }),
  );
}

/**
 * {@link writersView} of a generation's runs, asking for the owner's tokens only when there are
 * runs to name (most reads of an old head need none).
 */
export async function namedWriters(
  runs: readonly WriterRun[] | undefined,
  ownerTokens: () => Promise<readonly TokenRecord[]>,
): Promise<WriterView[] | undefined> {
  return runs && runs.length > 0 ? writersView(runs, await ownerTokens()) : undefined;
}

/** The run holding the byte at `offset`: the last one starting at or before it (runs are in offset order). */
export function writerAt<Run extends { offset: number }>(runs: readonly Run[], offset: number): Run | undefined {
  let lo = 0;
  let hi = runs.length - 1;
  let found: Run | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (runs[mid].offset <= offset) {
      found = runs[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * The device of each branch tip (an entry no other names as parent) of a compact tree, as
 * `[index, device]`: the run holding the tip's line. `undefined` when one device (or none) wrote
 * the generation: a label would say nothing.
 */
export function tipDevices(
  parents: readonly number[],
  offsets: readonly number[],
  runs: readonly WriterView[],
): [index: number, device: string][] | undefined {
  if (new Set(runs.map((run) => run.device)).size < 2) return undefined;
  const hasChild = new Uint8Array(parents.length);
  for (const parent of parents) if (parent >= 0) hasChild[parent] = 1;
  const tips: [number, string][] = [];
  for (let i = 0; i < parents.length; i++) {
    if (hasChild[i]) continue;
    const run = writerAt(runs, offsets[i]);
    if (run) tips.push([i, run.device]);
  }
  return tips;
}
