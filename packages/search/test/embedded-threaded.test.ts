import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedLines } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { afterAll, describe, expect, it } from "vitest";
import { ThreadedSearchIndex } from "../src/embedded-threaded.js";
import type { IndexBatch } from "../src/index.js";
import { parseQuery } from "../src/index.js";
import { describeSearchContract } from "./contract.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-search-threaded-"));
const stores = embeddedStores(join(dir, "store"));
const index = new ThreadedSearchIndex(join(dir, "search.db"), storedLines(stores));
afterAll(async () => {
  await index.close();
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

describeSearchContract("embedded, written by a worker thread", async () => ({ index, stores }));

const line = (o: object) => new TextEncoder().encode(`${JSON.stringify(o)}\n`);
const at = (sessionId: string) => ({ userId: "u-thread", sessionId, generation: 1, from: 0 });

describe("the embedded index's writer thread", () => {
  it("reads lines into documents on the writer thread, and searches see them at once", async () => {
    const bytes = line({
      type: "message",
      id: "m1",
      parentId: null,
      timestamp: "2026-02-01T10:00:00Z",
      message: { role: "user", content: "a kestrel over the bytes", timestamp: 1 },
    });
    expect(await index.applyLines([{ bytes, at: at("sess-lines") }])).toEqual([true]);
    const page = await index.search("u-thread", parseQuery("kestrel"), { limit: 5 });
    expect(page.sessions.map((s) => [s.sessionId, s.entries[0].entryId])).toEqual([["sess-lines", "m1"]]);
    expect(await index.state("u-thread", "sess-lines")).toEqual({ generation: 1, offset: bytes.length });
  });

  it("a call that fails on the writer thread rejects with its message, and the thread goes on", async () => {
    const broken = { ...at("sess-broken"), to: 1, documents: null, labels: {} } as unknown as IndexBatch;
    await expect(index.applyAll([broken])).rejects.toThrow(/documents|null|iterable/i);
    const fine: IndexBatch = {
      ...at("sess-fine"),
      to: 5,
      documents: [{ entryId: "f1", kind: "user", role: "user", text: "a merlin", time: 1 }],
      labels: {},
    };
    expect(await index.applyAll([fine])).toEqual([true]);
    expect(await index.state("u-thread", "sess-broken")).toBeUndefined();
  });

  it("closing waits for the writes asked for before it", async () => {
    const path = join(dir, "closing.db");
    const closing = new ThreadedSearchIndex(path, async () => []);
    const write = closing.applyAll([
      {
        ...at("sess-close"),
        to: 7,
        documents: [{ entryId: "c1", kind: "user", role: "user", text: "a hobby falcon", time: 1 }],
        labels: {},
      },
    ]);
    await closing.close();
    expect(await write).toEqual([true]);
    const reopened = new ThreadedSearchIndex(path, async () => []);
    expect(await reopened.state("u-thread", "sess-close")).toEqual({ generation: 1, offset: 7 });
    await reopened.close();
  });
});
