/** The storage layout's keys: each format has its parse, and keys sort as their numbers do. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  blobKey,
  PREFIXES,
  parseBlobKey,
  parseSearchIndexKey,
  parseSegmentKey,
  parseUploadKey,
  searchIndexKey,
  segmentKey,
  sessionPrefix,
  uploadKey,
} from "../src/index.js";

const id = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/);
const offset = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const nonce = fc.stringMatching(/^[0-9a-f]{12}$/);

describe("segment keys", () => {
  it("formats as the README and the bucket's rules expect", () => {
    expect(segmentKey("alice", "s-1", 2, 0, 4096, "9f2c0a1b2c3d")).toBe(
      "sessions/alice/s-1/00000002/0000000000000000-0000000000001000-9f2c0a1b2c3d",
    );
    expect(segmentKey("alice", "s-1", 2, 0, 1, "n").startsWith(sessionPrefix("alice", "s-1"))).toBe(true);
    expect(sessionPrefix("alice", "s-1").startsWith(PREFIXES.sessions)).toBe(true);
  });

  it("parses back what it formats", () => {
    fc.assert(
      fc.property(id, id, fc.integer({ min: 0, max: 0xffffffff }), offset, offset, nonce, (u, s, g, a, b, n) => {
        const [start, end] = a <= b ? [a, b] : [b, a];
        const parsed = parseSegmentKey(segmentKey(u, s, g, start, end, n));
        expect(parsed).toEqual({ userId: u, sessionId: s, generation: g, start, end, nonce: n });
      }),
    );
  });

  it("sorts in byte order as its offsets do, within a generation and across them", () => {
    fc.assert(
      fc.property(
        fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), offset),
        fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), offset),
        ([g1, s1], [g2, s2]) => {
          const a = segmentKey("u", "s", g1, s1, s1 + 1, "n");
          const b = segmentKey("u", "s", g2, s2, s2 + 1, "n");
          const byNumbers = g1 - g2 || s1 - s2;
          expect(Math.sign(a < b ? -1 : a > b ? 1 : 0)).toBe(Math.sign(byNumbers));
        },
      ),
    );
  });

  it("refuses what is not a segment key", () => {
    for (const key of [
      "sessions/alice/s-1/2/0-1-n",
      "sessions/alice/s-1/00000002/0000000000000000-0000000000001000",
      "sessions/alice/00000002/0000000000000000-0000000000001000-n",
      "uploads/alice/u1",
      "sessions/../s/00000002/0000000000000000-0000000000001000-n",
      "sessions/alice/s-1/0000000G/0000000000000000-0000000000001000-n",
    ]) {
      expect(parseSegmentKey(key), key).toBeUndefined();
    }
  });
});

describe("upload and blob keys", () => {
  it("parse back what they format, and nothing else", () => {
    fc.assert(
      fc.property(id, id, fc.stringMatching(/^[0-9a-f]{64}$/), (u, upload, hash) => {
        expect(uploadKey(u, upload).startsWith(PREFIXES.uploads)).toBe(true);
        expect(parseUploadKey(uploadKey(u, upload))).toEqual({ userId: u, uploadId: upload });
        expect(blobKey(u, hash).startsWith(PREFIXES.blobs)).toBe(true);
        expect(parseBlobKey(blobKey(u, hash))).toEqual({ userId: u, sha256: hash });
        expect(parseUploadKey(blobKey(u, hash))).toBeUndefined();
        expect(parseBlobKey(uploadKey(u, upload))).toBeUndefined();
      }),
    );
    expect(parseBlobKey(blobKey("u", "ABC"))).toBeUndefined();
    expect(parseUploadKey("uploads/u/a/b")).toBeUndefined();
  });
});

describe("search index keys", () => {
  it("parse back what they format, sort by version, and refuse other keys", () => {
    expect(searchIndexKey("alice", 3, "9f2c")).toBe("search/alice/0000000000000003-9f2c.sqlite");
    fc.assert(
      fc.property(id, offset, offset, nonce, (u, a, b, n) => {
        const key = searchIndexKey(u, a, n);
        expect(key.startsWith(PREFIXES.search)).toBe(true);
        expect(parseSearchIndexKey(key)).toEqual({ userId: u, version: a, nonce: n });
        expect(Math.sign(key < searchIndexKey(u, b, n) ? -1 : key > searchIndexKey(u, b, n) ? 1 : 0)).toBe(
          Math.sign(a - b),
        );
      }),
    );
    for (const key of ["search/alice/3-n.sqlite", "search/alice/0000000000000003-n", uploadKey("alice", "u")]) {
      expect(parseSearchIndexKey(key), key).toBeUndefined();
    }
  });
});
