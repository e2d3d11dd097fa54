/** Memo: made once per key, shared while being made, failures not kept, bounded. */
import { describe, expect, it } from "vitest";
import { Memo } from "../src/memo.js";

describe("Memo", () => {
  it("makes a key's value once: callers at the same time share the making, later ones the kept value", async () => {
    const memo = new Memo<string>(4, 100, (v) => v.length);
    let made = 0;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const make = async () => {
      made++;
      await gate;
      return "page";
    };
    const both = Promise.all([memo.get("k", make), memo.get("k", make)]);
    release();
    expect(await both).toEqual(["page", "page"]);
    expect(await memo.get("k", make)).toBe("page");
    expect(made).toBe(1);
    expect(await memo.get("other", async () => "tree")).toBe("tree");
  });

  it("keeps no failure: the next caller makes it again", async () => {
    const memo = new Memo<string>(4, 100, (v) => v.length);
    await expect(memo.get("k", async () => Promise.reject(new Error("busy")))).rejects.toThrow("busy");
    expect(await memo.get("k", async () => "made")).toBe("made");
  });

  it("keeps at most its count and weight, the least recently used going first", async () => {
    const memo = new Memo<string>(2, 10, (v) => v.length);
    let made = 0;
    const make = (v: string) => async () => {
      made++;
      return v;
    };
    await memo.get("a", make("aaaa"));
    await memo.get("b", make("bbbb"));
    await memo.get("a", make("aaaa")); // a is used again: b is the oldest now
    await memo.get("c", make("cccc")); // over the count: b goes
    expect(made).toBe(3);
    await memo.get("a", make("aaaa"));
    expect(made).toBe(3);
    await memo.get("b", make("bbbb"));
    expect(made).toBe(4);
    // Heavier than the whole budget: returned, never kept.
    await memo.get("big", make("x".repeat(11)));
    await memo.get("big", make("x".repeat(11)));
    expect(made).toBe(6);
  });
});
