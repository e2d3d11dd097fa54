import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { completeLength, encodeUtf8, scanLine, splitLines } from "../src/index.js";

function acceptsLikeJsonParse(text: string) {
  const bytes = encodeUtf8(text);
  let parses = true;
  try {
    JSON.parse(text);
  } catch {
    parses = false;
  }
  expect(scanLine(bytes, 0, bytes.length).kind !== "invalid", text).toBe(parses);
}

describe("scanLine accepts exactly what JSON.parse accepts", () => {
  it("any JSON value, as JSON.stringify writes it", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => acceptsLikeJsonParse(JSON.stringify(value))));
  });

  it("entries cut at any byte, with the next entry glued on (a torn write)", () => {
    const entry = fc.record({
      type: fc.constantFrom("message", "label", "compaction"),
      id: fc.stringMatching(/^[0-9a-f]{8}$/),
      parentId: fc.option(fc.stringMatching(/^[0-9a-f]{8}$/)),
      message: fc.record({ role: fc.constantFrom("user", "assistant"), content: fc.jsonValue() }),
    });
    fc.assert(
      fc.property(entry, entry, fc.nat(), (a, b, cut) => {
        const first = JSON.stringify(a);
        acceptsLikeJsonParse(first.slice(0, cut % (first.length + 1)) + JSON.stringify(b));
      }),
    );
  });

  it("arbitrary text, including control characters, escapes and numbers", () => {
    const piece = fc.constantFrom(
      "{",
      "}",
      "[",
      "]",
      ",",
      ":",
      '"',
      "\\",
      "\\u00e9",
      "\\x",
      "\t",
      "\u0001",
      " ",
      "-",
      "0",
      "01",
      "1.",
      "1.5e+3",
      "e",
      "true",
      "nul",
      "null",
      "\u2028",
      '"a"',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => acceptsLikeJsonParse(pieces.join(""))),
      { numRuns: 3000 },
    );
  });

  it("captures the envelope fields, the last duplicate key winning as in JSON.parse", () => {
    const line = encodeUtf8(
      '{"type":"message","id":"a","parentId":null,"id":"b","message":{"role":"assistant","provider":"p","model":"m","content":[{"type":"text"}]}}',
    );
    const result = scanLine(line, 0, line.length);
    expect(result.kind).toBe("object");
    if (result.kind !== "object") return;
    expect(result.envelope).toMatchObject({ type: "message", id: "b", parentId: null, role: "assistant" });
    expect(result.envelope.messageProvider).toBe("p");
    expect(result.envelope.messageModel).toBe("m");
  });

  it("decodes escaped and non-ASCII field values", () => {
    const line = encodeUtf8('{"type":"label","id":"\\u0041é","label":"caf\\u00e9 ☕"}');
    const result = scanLine(line, 0, line.length);
    expect(result.kind === "object" && [result.envelope.id, result.envelope.label]).toEqual(["Aé", "café ☕"]);
  });
});

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
