/** The bounded cache behind the reader's index pages and built indexes. */

/**
 * A least-recently-used map bounded by its number of entries and by their total weight (an
 * entry heavier than the whole budget is not kept).
 */
export class Lru<V> {
  private readonly map = new Map<string, { value: V; weight: number }>();
  private total = 0;

  constructor(
    private readonly capacity: number,
    private readonly maxWeight: number,
    private readonly weigh: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const weight = this.weigh(value);
    if (weight > this.maxWeight) return;
    this.map.set(key, { value, weight });
    this.total += weight;
    while (this.map.size > this.capacity || this.total > this.maxWeight) {
      this.delete(this.map.keys().next().value as string);
    }
  }

  /** What the entries weigh together. */
  get weight(): number {
    return this.total;
  }

  /** Drops every entry whose key `matches`. */
  deleteWhere(matches: (key: string) => boolean): void {
    for (const key of [...this.map.keys()]) if (matches(key)) this.delete(key);
  }

  /** Drops the entry of `key`, if any. */
  delete(key: string): void {
    const entry = this.map.get(key);
    if (!entry) return;
    this.map.delete(key);
    this.total -= entry.weight;
  }
}
