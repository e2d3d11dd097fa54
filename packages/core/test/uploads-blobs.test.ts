/**
 * The use cases routes call instead of the stores: large-line uploads, content-addressed blobs
 * and the dictionary lookup of a `pisync-deflate-dict` append, over in-memory ports.
 */
import { createHash } from "node:crypto";
import { DICT_BYTES } from "@pisync/protocol";
import { StorageUnavailableError } from "@pisync/store";
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

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("uploads", () => {
  const line = enc("0123456789");

  it("stores a line under a fresh id with its ticket, gives it back to its user only, and discards it", async () => {
    const uploads = new Uploads(stores.blobs, 100, () => new Date("2026-01-01T00:00:00Z"));
    const ticket = await uploads.create("alice", "s1", 10, sha(line));
    expect(ticket).toMatchObject({ url: undefined, expiresAt: "2026-01-01T00:15:00.000Z" });
    expect(ticket.uploadId).toMatch(/^[a-f0-9]{32}$/);
    expect(await uploads.expectedLength("alice", ticket.uploadId)).toBe(10);
    await uploads.put("alice", ticket.uploadId, line);
    expect(new TextDecoder().decode(await uploads.take("alice", ticket.uploadId, "s1"))).toBe("0123456789");
    // Another user's ticket and bytes: missing, whether to store, to read or to append.
    expect(await codeOf(uploads.take("bob", ticket.uploadId, "s1"))).toBe("not_found");
    expect(await codeOf(uploads.put("bob", ticket.uploadId, line))).toBe("not_found");
    // Another session of the same user: not this upload's.
    expect(await codeOf(uploads.take("alice", ticket.uploadId, "s2"))).toBe("not_found");
    await uploads.discard("alice", ticket.uploadId);
    expect(await codeOf(uploads.take("alice", ticket.uploadId, "s1"))).toBe("not_found");
    expect(await stores.blobs.list("uploads/")).toEqual([]);
  });

  it("refuses an upload without a ticket, or past its time", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const uploads = new Uploads(stores.blobs, 100, () => now);
    expect(await codeOf(uploads.put("alice", "a".repeat(32), line))).toBe("not_found");
    const ticket = await uploads.create("alice", "s1", 10, sha(line));
    now = new Date("2026-01-01T00:15:01Z");
    expect(await codeOf(uploads.put("alice", ticket.uploadId, line))).toBe("not_found");
    expect(await stores.blobs.list("uploads/")).toEqual([`uploads/alice/${ticket.uploadId}.ticket`]);
  });

  it("keeps nothing of bytes of another length or hash, and appends none", async () => {
    const uploads = new Uploads(stores.blobs, 100);
    const ticket = await uploads.create("alice", "s1", 10, sha(line));
    expect(await codeOf(uploads.put("alice", ticket.uploadId, enc("012345678")))).toBe("upload_mismatch");
    expect(await codeOf(uploads.put("alice", ticket.uploadId, enc("0123456780")))).toBe("upload_mismatch");
    expect(await stores.blobs.list("uploads/")).toEqual([`uploads/alice/${ticket.uploadId}.ticket`]);
    // Bytes PUT past the API (a presigned URL checks the length only) are checked when taken.
    await stores.blobs.put(`uploads/alice/${ticket.uploadId}`, enc("0123456780"));
    expect(await codeOf(uploads.take("alice", ticket.uploadId, "s1"))).toBe("upload_mismatch");
    expect(await stores.blobs.list("uploads/")).toEqual([]);
  });

  it("sweeps what no append claimed a day after its ticket, and bytes without one", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const uploads = new Uploads(stores.blobs, 100, () => now);
    const old = await uploads.create("alice", "s1", 10, sha(line));
    await uploads.put("alice", old.uploadId, line);
    now = new Date("2026-01-01T20:00:00Z");
    const fresh = await uploads.create("bob", "s1", 10, sha(line));
    await uploads.put("bob", fresh.uploadId, line);
    await stores.blobs.put(`uploads/bob/${"c".repeat(32)}`, line);
    expect(await uploads.sweep()).toBe(1);
    now = new Date("2026-01-02T00:00:01Z");
    expect(await uploads.sweep()).toBe(2);
    expect((await stores.blobs.list("uploads/")).sort()).toEqual(
      [`uploads/bob/${fresh.uploadId}`, `uploads/bob/${fresh.uploadId}.ticket`].sort(),
    );
    expect(await codeOf(uploads.take("alice", old.uploadId, "s1"))).toBe("not_found");
    expect(await uploads.take("bob", fresh.uploadId, "s1")).toEqual(line);
  });

  it("leaves an upload whose ticket could not be read (the store did not answer), and a ticket that does not parse goes", async () => {
    const uploads = new Uploads(stores.blobs, 100);
    const fresh = await uploads.create("alice", "s1", 10, sha(line));
    await uploads.put("alice", fresh.uploadId, line);
    const garbled = `uploads/alice/${"d".repeat(32)}`;
    await stores.blobs.put(garbled, line);
    await stores.blobs.put(`${garbled}.ticket`, enc("{not json"));
    const silent = Object.create(stores.blobs) as typeof stores.blobs;
    silent.get = async () => {
      throw new StorageUnavailableError("the storage service is unavailable");
    };
    expect(await new Uploads(silent, 100).sweep()).toBe(0);
    expect(await uploads.sweep()).toBe(2);
    expect(await uploads.take("alice", fresh.uploadId, "s1")).toEqual(line);
  });

  it("refuses a line over the limit, a bad session id and a bad upload id, with their codes", async () => {
    const uploads = new Uploads(stores.blobs, 100);
    expect(await codeOf(uploads.create("alice", "s1", 101, sha(line)))).toBe("upload_too_large");
    expect(await codeOf(uploads.create("alice", "../x", 1, sha(line)))).toBe("invalid_session_id");
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
