import { describe, expect, it } from "vitest";
import { Lru } from "../src/lru.js";

const weighed = (capacity: number, maxWeight: number) => new Lru<number[]>(capacity, maxWeight, (v) => v.length);
const items = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("the reader's page cache", () => {
  it("keeps the most recently used entries, up to its count", () => {
    const lru = weighed(2, 100);
    lru.set("a", items(1));
    lru.set("b", items(1));
    lru.get("a");
    lru.set("c", items(1));
    expect(lru.get("a")).toHaveLength(1);
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("c")).toHaveLength(1);
  });

  it("evicts the least recently used until the total weight fits the budget", () => {
    const lru = weighed(10, 10);
    lru.set("a", items(4));
    lru.set("b", items(4));
    lru.set("c", items(4));
    expect(lru.get("a")).toBeUndefined();
    expect(lru.weight).toBe(8);
    // An entry that grew is weighed again when set back.
    const b = lru.get("b") as number[];
    b.push(...items(4));
    lru.set("b", b);
    expect(lru.get("c")).toBeUndefined();
    expect(lru.weight).toBe(8);
  });

  it("does not keep an entry heavier than the whole budget", () => {
    const lru = weighed(10, 10);
    lru.set("a", items(3));
    lru.set("huge", items(11));
    expect(lru.get("huge")).toBeUndefined();
    expect(lru.get("a")).toHaveLength(3);
    expect(lru.weight).toBe(3);
  });
});
