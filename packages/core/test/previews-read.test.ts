/**
 * Previews made again of scattered entries (a share's branch tips, masked) read those entries'
 * lines only, however far apart they lie: not the bytes between them.
 */
import type { Stores } from "@pisync/store";
import { describeOnEveryStore } from "@pisync/testing";
import { expect, it } from "vitest";
import { Reader } from "../src/index.js";
import { append } from "./large-session.js";

/** The stores with the bytes their blob reads return counted. */
function countingBytes(stores: Stores) {
  const read = { bytes: 0 };
  const blobs = Object.create(stores.blobs) as Stores["blobs"];
  blobs.get = async (key, range) => {
    const bytes = await stores.blobs.get(key, range);
    read.bytes += bytes.length;
    return bytes;
  };
  return { stores: { meta: stores.meta, blobs }, read };
}

describeOnEveryStore("previews of scattered entries", (pair) => {
  it("read the entries' lines, not the bytes between them", async () => {
    const { stores } = pair();
    await append(stores, "u", "wide", "p", 0, 1200);
    const counted = countingBytes(stores);
    const reader = new Reader(counted.stores);
    const head = await reader.head("u", "wide");
    const { index } = await reader.index(head, head.current);
    // 40 entries far apart (a share's tips, say): more than one read each would be allowed to merge.
    const scattered = index.records.filter((r) => r.line % 29 === 0 && r.type === "message").slice(0, 40);
    expect(scattered).toHaveLength(40);
    counted.read.bytes = 0;
    const previews = await reader.previews(head, scattered, (text) => text.toUpperCase());
    expect([...previews.keys()].sort((a, b) => a - b)).toEqual(scattered.map((r) => r.line));
    expect(previews.get(scattered[0]!.line)).toContain("P TURN");
    expect(counted.read.bytes).toBe(scattered.reduce((n, r) => n + r.length, 0));
  });
});
