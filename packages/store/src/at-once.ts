/**
 * Runs `work` over `items`, at most `width` at once, none started after `deadline` (ms since the
 * epoch; no deadline when absent). @returns how many were not started.
 */
export async function eachAtOnce<T>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<void>,
  deadline = Number.POSITIVE_INFINITY,
): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && Date.now() < deadline) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return items.length - next;
}
