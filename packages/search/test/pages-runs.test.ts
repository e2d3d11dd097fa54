import { describe, expect, it } from "vitest";
import { decodePages, encodePages } from "../src/aws/objects.js";

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
