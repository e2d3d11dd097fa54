/**
 * The use cases routes call instead of the stores: large-line uploads, content-addressed blobs
 * and the dictionary lookup of a `pisync-deflate-dict` append, over in-memory ports.
 */
import { createHash } from "node:crypto";
import { DICT_BYTES } from "@pisync/protocol";
import { beforeEach, describe, expect, it } from "vitest";
import { Appender } from "../src/append.js";
import { Blobs } from "../src/blobs.js";
import { type DomainError, OffsetConflict } from "../src/errors.js";
import { Uploads } from "../src/uploads.js";
import { memoryStores } from "./memory-stores.js";

const enc = (text: string) => new TextEncoder().encode(text);
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (error: DomainError) => error.code,
  );

let stores: ReturnType<typeof memoryStores>;
beforeEach(() => {
  stores = memoryStores();
});

describe("uploads", () => {
  it("stores a line under a fresh id, gives it back to its user only, and discards it", async () => {
    const uploads = new Uploads(stores.blobs, 100, () => new Date("2026-01-01T00:00:00Z"));
    const ticket = await uploads.create("alice", "s1", 10);
    expect(ticket).toMatchObject({ url: undefined, expiresAt: "2026-01-01T00:15:00.000Z" });
    expect(ticket.uploadId).toMatch(/^[a-f0-9]{32}$/);
    await uploads.put("alice", ticket.uploadId, enc("0123456789"));
    expect(new TextDecoder().decode(await uploads.take("alice", ticket.uploadId))).toBe("0123456789");
    expect(await codeOf(uploads.take("bob", ticket.uploadId))).toBe("not_found");
    await uploads.discard("alice", ticket.uploadId);
    expect(await codeOf(uploads.take("alice", ticket.uploadId))).toBe("not_found");
  });

  it("refuses a line over the limit, a bad session id and a bad upload id, with their codes", async () => {
    const uploads = new Uploads(stores.blobs, 100);
    expect(await codeOf(uploads.create("alice", "s1", 101))).toBe("upload_too_large");
    expect(await codeOf(uploads.create("alice", "../x", 1))).toBe("invalid_session_id");
    expect(await codeOf(uploads.put("alice", "../../x", enc("x")))).toBe("invalid_upload_id");
  });
});

describe("blobs", () => {
  it("keeps a blob under the hash of its bytes, per user", async () => {
    const blobs = new Blobs(stores.blobs);
    const bytes = enc("an image");
    const hash = createHash("sha256").update(bytes).digest("hex");
    await blobs.put("alice", hash, bytes);
    expect(await blobs.get("alice", hash)).toEqual(bytes);
    expect(await codeOf(blobs.get("bob", hash))).toBe("not_found");
    expect(await codeOf(blobs.put("alice", hash, enc("other bytes")))).toBe("blob_hash_mismatch");
    expect(await codeOf(blobs.get("alice", "A".repeat(64)))).toBe("invalid_blob_name");
  });
});

describe("the dictionary of an append", () => {
  const header = `${JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
  const filler = `${JSON.stringify({ type: "custom", id: "c1", parentId: null, data: "x".repeat(DICT_BYTES) })}\n`;

  it("is the committed bytes just before the offset, at most DICT_BYTES of them", async () => {
    const appender = new Appender(stores);
    const bytes = enc(header + filler);
    await appender.append({ userId: "alice", sessionId: "s1", offset: 0, body: bytes });
    expect(await appender.dictionary("alice", "s1", 0)).toEqual(new Uint8Array(0));
    expect(await appender.dictionary("alice", "s1", 10)).toEqual(bytes.subarray(0, 10));
    expect(await appender.dictionary("alice", "s1", bytes.length)).toEqual(bytes.subarray(bytes.length - DICT_BYTES));
    const past = await appender.dictionary("alice", "s1", bytes.length + 1).catch((error) => error);
    expect(past).toBeInstanceOf(OffsetConflict);
    expect(past).toMatchObject({ committed: bytes.length, generation: 1 });
  });

  it("finds 0 bytes for a missing session, but lets any other failure through", async () => {
    const appender = new Appender(stores);
    expect(await appender.dictionary("alice", "nope", 5).catch((error) => error)).toMatchObject({ committed: 0 });
    stores.meta.getHead = () => Promise.reject(new Error("the table is unreachable"));
    await expect(appender.dictionary("alice", "nope", 5)).rejects.toThrow("the table is unreachable");
  });
});
