import { describe, expect, it } from "vitest";
import { completeLength, encodeUtf8, splitLines } from "../src/index.js";

describe("framing", () => {
  it("splits on \\n only, never on U+2028/U+2029, and holds back an unterminated line", () => {
    const first = '{"a":"x\u2028y\u2029z"}\r';
    const firstLength = encodeUtf8(first).length; // U+2028 and U+2029 are 3 bytes each
    expect(firstLength).toBe(18);
    const bytes = encodeUtf8(`${first}\n\n{"b":1}\n{"c"`);
    expect(splitLines(bytes).map((s) => [s.line, s.offset, s.length])).toEqual([
      [1, 0, 18],
      [2, 19, 0],
      [3, 20, 7],
    ]);
    expect(completeLength(bytes)).toBe(28);
  });
});
