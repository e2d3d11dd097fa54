/**
 * Runs `work` over `items`, at most `width` at once, none started after `deadline` (ms since the
 * epoch; no deadline when absent). When one fails, no other is started, and it rejects with
 * that first error once those already running have ended: nothing of it still runs when the
 * caller goes on (a fetch that lands later could write into what the caller did next).
 * @returns how many were not started.
 */
export async function eachAtOnce<T>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<void>,
  deadline = Number.POSITIVE_INFINITY,
): Promise<number> {
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async () => {
    while (!failed && next < items.length && Date.now() < deadline) {
      try {
        await work(items[next++] as T);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  if (failed) throw failed.error;
  return items.length - next;
}
