import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { CreateShare, ErrorBody, SearchQuery } from "../src/index.js";
import { lazySchema } from "../src/lazy-schema.js";

const shape = () => z.object({ name: z.string().check(z.minLength(1)), n: z.optional(z.number().check(z.int())) });

describe("lazySchema", () => {
  it("builds its schema on first use, once", () => {
    let builds = 0;
    const lazy = lazySchema(() => {
      builds++;
      return shape();
    });
    const outer = z.object({ inner: lazy });
    expect(builds).toBe(0);
    expect(outer.safeParse({ inner: { name: "a" } }).success).toBe(true);
    expect(lazy.safeParse({ name: "b" }).success).toBe(true);
    expect(builds).toBe(1);
  });

  it("answers as the schema it stands for: parses, errors, shape, instanceof, JSON Schema", () => {
    const eager = shape();
    const lazy = lazySchema(shape);
    for (const value of [{ name: "a", n: 2 }, { name: "" }, { name: "a", n: 1.5 }, { n: 1 }, null, "x"]) {
      const [a, b] = [eager.safeParse(value), lazy.safeParse(value)];
      expect(b.success).toBe(a.success);
      expect(b.data).toEqual(a.data);
      expect(b.error?.issues).toEqual(a.error?.issues);
    }
    expect(Object.keys(lazy.shape)).toEqual(["name", "n"]);
    expect(lazy instanceof z.ZodMiniObject).toBe(true);
    expect(z.toJSONSchema(z.object({ x: lazy }))).toEqual(z.toJSONSchema(z.object({ x: eager })));
  });

  it("the protocol's schemas validate as before", () => {
    expect(SearchQuery.safeParse({ q: "a", limit: "20" }).data).toEqual({ q: "a", limit: 20 });
    expect(SearchQuery.safeParse({ q: "" }).success).toBe(false);
    expect(CreateShare.safeParse({ expiresIn: 1.5 }).success).toBe(false);
    expect(ErrorBody.safeParse({ error: "x", code: "not_a_code" }).success).toBe(false);
    expect(Object.keys(SearchQuery.shape)).toEqual(["q", "limit", "cursor", "team"]);
  });
});
