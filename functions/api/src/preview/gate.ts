/**
 * A bound on work that runs at once ({@link Gate}): at most `running` at a time and `waiting`
 * queued; one more is turned away at once, so a burst of requests never piles up behind it.
 */
export class Gate {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(
    private readonly running: number,
    private readonly waiting: number,
  ) {}

  /** Runs `work` once a place is free; `undefined` at once (nothing run) when the queue is full too. */
  async run<T>(work: () => Promise<T>): Promise<{ value: T } | undefined> {
    if (this.active >= this.running) {
      if (this.queue.length >= this.waiting) return undefined;
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else this.active++;
    try {
      return { value: await work() };
    } finally {
      const next = this.queue.shift();
      if (next)
        next(); // the place passes on: `active` stays
      else this.active--;
    }
  }

  /** Work running and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.active, waiting: this.queue.length };
  }
}
