/** A task run on a schedule by the one-machine server. */

/**
 * Runs `task` every `ms` (now too when `now`), one run at a time; returns its stop. A run that
 * answers false failed: with `retryMs`, the next one runs that soon instead of a whole period later.
 */
export function every(ms: number, now: boolean, task: () => Promise<unknown>, retryMs?: number): () => void {
  let running = false;
  let retry: NodeJS.Timeout | undefined;
  const pass = () => {
    if (running) return;
    running = true;
    task()
      .then((ok) => {
        if (ok !== false || retryMs === undefined || retry) return;
        retry = setTimeout(() => {
          retry = undefined;
          pass();
        }, retryMs);
        retry.unref();
      })
      .finally(() => {
        running = false;
      });
  };
  if (now) pass();
  const timer = setInterval(pass, ms);
  timer.unref();
  return () => {
    clearInterval(timer);
    clearTimeout(retry);
  };
}
