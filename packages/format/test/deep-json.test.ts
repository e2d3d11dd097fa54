/**
 * JSON at any depth: `stringifyJson` writes what `JSON.stringify` writes (checked on random
 * values, and past the stack on a value `JSON.stringify` cannot write), and `deeperThan` tells
 * depth without recursion.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deeperThan, stringifyJson } from "../src/index.js";

/** A value nested `depth` deep: arrays and objects in turn, a string at the bottom. */
function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = i % 2 ? [value, 1] : { a: value, u: undefined };
  return value;
}

describe("stringifyJson", () => {
  it("writes JSON.stringify's text for any value it can write", () => {
    const member = fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.date({ noInvalidDate: true }));
    fc.assert(
      fc.property(fc.anything({ values: [member], withObjectString: false }), fc.jsonValue(), (a, b) => {
        expect(stringifyJson(a)).toBe(JSON.stringify(a));
        expect(stringifyJson(b)).toBe(JSON.stringify(b));
      }),
    );
  });

  it("writes a value nested past the stack, as JSON.parse reads it back", () => {
    const text = `${"[".repeat(10_000)}{"a":"x"}${"]".repeat(10_000)}`;
    const value = JSON.parse(text);
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    expect(stringifyJson(value)).toBe(text);
    // `undefined` members and `toJSON` at depth, as JSON.stringify treats them.
    const deep = nested(20_000);
    const written = stringifyJson(deep) as string;
    expect(written.startsWith('[{"a":[{"a":')).toBe(true);
    expect(written).not.toContain("undefined");
    expect(stringifyJson([new Date(0), undefined, () => 1])).toBe('["1970-01-01T00:00:00.000Z",null,null]');
  });

  it("cuts at maxChars, shallow or deep", () => {
    expect(stringifyJson({ a: "x".repeat(100) }, 10)).toBe('{"a":"xxxx');
    expect(stringifyJson(nested(20_000), 12)).toBe('[{"a":[{"a":');
  });

  it("refuses a cycle at any depth", () => {
    const a: unknown[] = [];
    a.push(a);
    expect(() => stringifyJson(a)).toThrow(TypeError);
    const deep = JSON.parse(`${"[".repeat(10_000)}${"]".repeat(10_000)}`);
    let inner = deep;
    while (inner[0]) inner = inner[0];
    inner.push(deep);
    expect(() => stringifyJson(deep)).toThrow(TypeError);
  });
});

describe("deeperThan", () => {
  it("tells depth without a stack, stopping early", () => {
    expect(deeperThan("x", 0)).toBe(false);
    expect(deeperThan([], 0)).toBe(true);
    expect(deeperThan([[1]], 2)).toBe(false);
    expect(deeperThan([[1]], 1)).toBe(true);
    expect(deeperThan(nested(20_000), 19_999)).toBe(true);
    expect(deeperThan(nested(20_000), 20_000)).toBe(false);
  });
});
