/**
 * Built tree indexes, kept per session version: a million-line session's index takes seconds
 * to build, so it is built once per version (its generation and length) and shared by every
 * request that reads that version, each through its own view.
 */
import type { SessionIndex } from "@pisync/format";
import { Lru } from "./lru.js";

/** A generation's tree index and the previews of its entries, by line. */
export interface BuiltIndex {
  index: SessionIndex;
  previews: Record<number, string>;
}

interface Kept {
  length: number;
  built: BuiltIndex;
}

/**
 * A view of a shared index for one request: the tree (records, ids, children) is the shared
 * one, the entries it parses or is handed (`prime`) are its own. A share's masked entries and
 * the owner's unmasked ones never meet in one cache.
 */
export function indexView(built: BuiltIndex): BuiltIndex {
  const index = Object.create(built.index) as SessionIndex;
  Object.defineProperty(index, "cache", { value: new Map(), writable: true });
  return { index, previews: built.previews };
}

/**
 * Indexes by generation key, each for one length: a request for the length kept gets a view
 * of it; requests for a length not kept yet share one build (a link opened by many at once is
 * built once). Bounded by the number of generations and their records in all.
 */
export class IndexCache {
  private readonly kept: Lru<Kept>;
  private readonly building = new Map<string, { length: number; built: Promise<BuiltIndex> }>();

  constructor(generations: number, maxRecords: number) {
    this.kept = new Lru(generations, maxRecords, (kept) => kept.built.index.records.length);
  }

  /** A view of the index of `key` at `length`, built with `build` unless kept or being built. */
  async get(key: string, length: number, build: () => Promise<BuiltIndex>): Promise<BuiltIndex> {
    const kept = this.kept.get(key);
    if (kept?.length === length) return indexView(kept.built);
    const pending = this.building.get(key);
    if (pending?.length === length) return indexView(await pending.built);
    // The version kept is stale: let it go now (readers still holding it keep it alive), so the
    // old and the new index of a large session are not both kept while the new one is built.
    if (kept) this.kept.delete(key);
    const built = build();
    this.building.set(key, { length, built });
    try {
      const done = await built;
      // A generation only grows: an older length finishing late never replaces a newer one.
      const now = this.kept.get(key);
      if (!now || now.length <= length) this.kept.set(key, { length, built: done });
      return indexView(done);
    } finally {
      if (this.building.get(key)?.built === built) this.building.delete(key);
    }
  }

  /** Forgets every index of a session (its key prefix): after a delete. */
  forget(prefix: string): void {
    this.kept.deleteWhere((key) => key.startsWith(prefix));
  }
}
