/**
 * The blob port's contract: bytes by key, whole or ranged, listed under a prefix.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { NotFoundError } from "../src/index.js";
import { bytes, type ContractContext, text } from "./contract.js";

/** The blob port's part of the storage contract, run by `describeStoreContract` on every store. */
export function describeBlobContract({ stores }: ContractContext) {
  describe("blobs", () => {
    it("put then get returns the bytes; a range returns that slice", async () => {
      const key = `t/${randomUUID()}/a`;
      await stores.blobs.put(key, bytes("hello, world\n"));
      expect(text(await stores.blobs.get(key))).toBe("hello, world\n");
      expect(text(await stores.blobs.get(key, { start: 7, end: 12 }))).toBe("world");
      expect(text(await stores.blobs.get(key, { start: 3, end: 3 }))).toBe("");
    });

    it("a range past the object's end gives the bytes there are: the end's, or none", async () => {
      const key = `t/${randomUUID()}/a`;
      await stores.blobs.put(key, bytes("hello, world\n"));
      expect(text(await stores.blobs.get(key, { start: 7, end: 100 }))).toBe("world\n");
      expect(text(await stores.blobs.get(key, { start: 13, end: 20 }))).toBe("");
      expect(text(await stores.blobs.get(key, { start: 50, end: 60 }))).toBe("");
    });

    it("put replaces an object whole", async () => {
      const key = `t/${randomUUID()}/a`;
      await stores.blobs.put(key, bytes("first version, longer"));
      await stores.blobs.put(key, bytes("second"));
      expect(text(await stores.blobs.get(key))).toBe("second");
    });

    it("a missing object is NotFoundError, whole or ranged", async () => {
      const key = `t/${randomUUID()}/missing`;
      await expect(stores.blobs.get(key)).rejects.toBeInstanceOf(NotFoundError);
      await expect(stores.blobs.get(key, { start: 0, end: 4 })).rejects.toBeInstanceOf(NotFoundError);
    });

    it("lists keys under a prefix in order, and deletes (missing keys ignored)", async () => {
      const prefix = `t/${randomUUID()}/`;
      for (const k of ["b/2", "a/1", "b/1"]) await stores.blobs.put(`${prefix}${k}`, bytes(k));
      await stores.blobs.put(`t/${randomUUID()}/other`, bytes("x"));
      expect(await stores.blobs.list(prefix)).toEqual([`${prefix}a/1`, `${prefix}b/1`, `${prefix}b/2`]);
      await stores.blobs.delete([`${prefix}a/1`, `${prefix}nope`]);
      expect(await stores.blobs.list(prefix)).toEqual([`${prefix}b/1`, `${prefix}b/2`]);
    });

    it("lists objects under a prefix in key order, with their sizes and when they were written", async () => {
      const prefix = `t/${randomUUID()}/`;
      // S3 keeps LastModified to the second: the window is widened by that much each side.
      const before = Date.now() - 1000;
      await stores.blobs.put(`${prefix}b`, bytes("twelve bytes"));
      await stores.blobs.put(`${prefix}a/1`, bytes("four"));
      await stores.blobs.put(`t/${randomUUID()}/other`, bytes("x"));
      const after = Date.now() + 1000;
      const listed = await stores.blobs.listObjects(prefix);
      expect(listed.map(({ key, size }) => ({ key, size }))).toEqual([
        { key: `${prefix}a/1`, size: 4 },
        { key: `${prefix}b`, size: 12 },
      ]);
      for (const { modifiedAt } of listed) {
        expect(modifiedAt).toBeInstanceOf(Date);
        expect(modifiedAt.getTime()).toBeGreaterThanOrEqual(before);
        expect(modifiedAt.getTime()).toBeLessThanOrEqual(after);
      }
      await stores.blobs.delete([`${prefix}b`]);
      expect((await stores.blobs.listObjects(prefix)).map((o) => o.key)).toEqual([`${prefix}a/1`]);
    });

    it("binary bytes survive as they are (broken UTF-8, NUL, CRLF)", async () => {
      const key = `t/${randomUUID()}/bin`;
      const data = new Uint8Array([0x7b, 0xe2, 0x80, 0x00, 0x0d, 0x0a, 0xff, 0x0a]);
      await stores.blobs.put(key, data);
      expect([...(await stores.blobs.get(key))]).toEqual([...data]);
    });
  });
}
