/** Results of asynchronous work by key, made once and kept (bounded): a share's page and tree. */
import { Lru } from "./lru.js";

/**
 * What `make` answers for a key, made once: callers asking at the same time share one making,
 * later callers get the kept value. Kept in an {@link Lru} bounded by count and weight; a
 * failed making is not kept.
 */
export class Memo<V> {
  private readonly kept: Lru<V>;
  private readonly making = new Map<string, Promise<V>>();

  constructor(capacity: number, maxWeight: number, weigh: (value: V) => number) {
    this.kept = new Lru(capacity, maxWeight, weigh);
  }

  /** The value of `key`: kept, being made, or made now by `make`. */
  async get(key: string, make: () => Promise<V>): Promise<V> {
    const kept = this.kept.get(key);
    if (kept !== undefined) return kept;
    const pending = this.making.get(key);
    if (pending) return pending;
    const made = make();
    this.making.set(key, made);
    try {
      const value = await made;
      this.kept.set(key, value);
      return value;
    } finally {
      if (this.making.get(key) === made) this.making.delete(key);
    }
  }
}
