import { describe, expect, it } from "vitest";
import { decodeManifest, decodePages, encodeManifest, encodePages } from "../src/aws/objects.js";

describe("a patch's page list, as runs", () => {
  it("round-trips pages that run and pages that stand alone, in base 36", () => {
    const pages = [1, 2, 3, 7, 36, 37, 1000, 1_000_000];
    expect(encodePages(pages)).toBe("1-3,7,10-11,rs,lfls");
    expect(decodePages(encodePages(pages))).toEqual(pages);
    expect(decodePages(encodePages([]))).toEqual([]);
  });

  it("refuses a malformed list instead of reading pages that are not there", () => {
    for (const text of ["0", "5-3", "a,,b", "x!"]) expect(() => decodePages(text)).toThrow(/malformed/);
  });
});

describe("a base's manifest", () => {
  const manifest = { length: 8192, pageBytes: 4096, chunkBytes: 8192, chunks: ["c"], hot: "h" };
  const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

  it("round-trips, patches included", () => {
    const patched = { ...manifest, patches: [{ key: "p", pages: "1-2", bytes: 8200 }] };
    expect(decodeManifest(encodeManifest(patched))).toEqual(patched);
  });

  it("refuses a field this code does not know, in the manifest or a patch (a later format is not misread)", () => {
    expect(() => decodeManifest(bytes({ ...manifest, levels: [] }))).toThrow();
    expect(() =>
      decodeManifest(bytes({ ...manifest, patches: [{ key: "p", pages: "1", bytes: 1, level: 1 }] })),
    ).toThrow();
  });
});
