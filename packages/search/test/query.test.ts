import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { filePatterns, ftsMatch, parseQuery, QueryError } from "../src/query.js";

const NOW = Date.parse("2026-03-10T12:00:00Z");
const DAY = 86_400_000;

function errorOf(text: unknown): string {
  try {
    parseQuery(text, NOW);
  } catch (error) {
    expect(error).toBeInstanceOf(QueryError);
    expect((error as QueryError).code).toBe("bad_query");
    return (error as Error).message;
  }
  throw new Error(`parsed: ${String(text)}`);
}

describe("parseQuery", () => {
  it("reads words, phrases, prefixes and exclusions", () => {
    expect(parseQuery('retry "S3 bucket" upl* -flaky -"old plan"', NOW).terms).toEqual([
      { kind: "word", text: "retry", exclude: false },
      { kind: "phrase", text: "S3 bucket", exclude: false },
      { kind: "prefix", text: "upl", exclude: false },
      { kind: "word", text: "flaky", exclude: true },
      { kind: "phrase", text: "old plan", exclude: true },
    ]);
  });

  it("reads every filter", () => {
    const query = parseQuery(
      'fix cwd:"/home/me/my app" role:tool since:7d before:2026-03-09 model:opus label:done',
      NOW,
    );
    expect(query).toEqual({
      terms: [{ kind: "word", text: "fix", exclude: false }],
      cwd: "/home/me/my app",
      role: "tool",
      since: NOW - 7 * DAY,
      before: Date.parse("2026-03-09T00:00:00Z"),
      model: "opus",
      label: "done",
    });
    expect(parseQuery("since:12h", NOW).since).toBe(NOW - 12 * 3_600_000);
    expect(parseQuery("since:2w", NOW).since).toBe(NOW - 14 * DAY);
    expect(parseQuery("since:2026-01-01", NOW).since).toBe(Date.parse("2026-01-01T00:00:00Z"));
  });

  it("takes a filter alone, and unknown key:value text as words", () => {
    expect(parseQuery("role:user", NOW)).toEqual({ terms: [], role: "user" });
    expect(parseQuery("http://example.com", NOW).terms).toEqual([
      { kind: "word", text: "http://example.com", exclude: false },
    ]);
  });

  it("refuses malformed queries with a message that says what is wrong", () => {
    expect(errorOf("")).toMatch(/empty/);
    expect(errorOf("   ")).toMatch(/empty/);
    expect(errorOf(42)).toBeTruthy();
    expect(errorOf("x".repeat(1001))).toMatch(/longer than 1000/);
    expect(errorOf('"open phrase')).toMatch(/unclosed quote at character 1/);
    expect(errorOf('a"b')).toMatch(/quote inside a word/);
    expect(errorOf('"ab"cd')).toMatch(/followed by a space/);
    expect(errorOf('"ab"*')).toMatch(/phrase cannot be a prefix/);
    expect(errorOf("a*b")).toMatch(/may only end a word/);
    expect(errorOf("a*")).toMatch(/a prefix needs at least 2 letters or digits/);
    expect(errorOf("*")).toMatch(/no letters or digits/);
    expect(errorOf("role:robot")).toMatch(/role: is user, assistant or tool, not "robot"/);
    expect(errorOf("role:user role:tool")).toMatch(/role: is given twice/);
    expect(errorOf("since:yesterday")).toMatch(/since: takes 7d, 12h, 2w or a date/);
    expect(errorOf("before:7d")).toMatch(/before: takes a date/);
    expect(errorOf("before:2026-13-45")).toMatch(/before: takes a date/);
    expect(errorOf("cwd:")).toMatch(/cwd: needs a value/);
    expect(errorOf("-role:user x")).toMatch(/cannot be excluded/);
    expect(errorOf("-flaky")).toMatch(/exclusions need at least one word/);
    expect(errorOf("-flaky role:user")).toMatch(/exclusions need at least one word/);
    expect(errorOf("--- ...")).toMatch(/no words, phrases or filters/);
    expect(errorOf("since:2026-02-01 before:2026-01-01")).toMatch(/since: is not before before:/);
    expect(errorOf(Array.from({ length: 33 }, (_, i) => `w${i}`).join(" "))).toMatch(/33 words/);
  });
});

describe("the query budget", () => {
  it("counts a phrase's words, and every word of a term, toward the budget", () => {
    const phrase = `"${Array.from({ length: 249 }, () => "the").join(" ")}"`;
    expect(errorOf(phrase)).toMatch(/249 words.*at most 32/);
    expect(
      errorOf(
        `"${Array.from({ length: 20 }, (_, i) => `a${i}`).join(" ")}" ${Array.from({ length: 13 }, (_, i) => `b${i}`).join(" ")}`,
      ),
    ).toMatch(/33 words/);
    expect(errorOf(`x -"${Array.from({ length: 32 }, () => "the").join(" ")}"`)).toMatch(/33 words/);
    expect(errorOf(Array.from({ length: 17 }, () => "a-b").join(" "))).toMatch(/34 words/);
    expect(parseQuery(`"${Array.from({ length: 32 }, () => "the").join(" ")}"`, NOW).terms).toHaveLength(1);
  });

  it("needs two letters or digits in every word of a prefix, and bounds the prefixes of a query", () => {
    expect(errorOf("x-a*")).toMatch(/"x-a\*": every word of a prefix needs at least 2 letters or digits/);
    expect(errorOf("ab-c*")).toMatch(/every word of a prefix/);
    expect(errorOf("a.bc*")).toMatch(/every word of a prefix/);
    expect(parseQuery("ab-cd*", NOW).terms).toEqual([{ kind: "prefix", text: "ab-cd", exclude: false }]);
    expect(errorOf("aa* bb* cc* dd* ee*")).toMatch(/more than 4 prefixes/);
    expect(parseQuery("aa* bb* cc* dd*", NOW).terms).toHaveLength(4);
  });
});

describe("file:", () => {
  it("reads a path, a glob or a folder, quoted or not, once per query", () => {
    expect(parseQuery("file:src/cart.ts", NOW)).toEqual({ terms: [], file: "src/cart.ts" });
    expect(parseQuery('fix file:"my dir/a b.ts"', NOW).file).toBe("my dir/a b.ts");
    expect(errorOf("file:a.ts file:b.ts")).toMatch(/file: is given twice/);
    expect(errorOf("-file:a.ts")).toMatch(/cannot be excluded/);
    expect(errorOf("file:")).toMatch(/file: needs a value/);
  });

  it("counts a file: as a word, and one with * as a prefix too", () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");
    expect(errorOf(`${words(32)} file:a.ts`)).toMatch(/33 words/);
    expect(parseQuery(`${words(31)} file:a.ts`, NOW).terms).toHaveLength(31);
    expect(errorOf("aa* bb* cc* dd* file:*.ts")).toMatch(/more than 4 prefixes/);
    expect(parseQuery("aa* bb* cc* dd* file:a.ts", NOW).file).toBe("a.ts");
  });

  it("matches the path or a tail after a /, * for any characters, a trailing / for a folder; the rest literal", () => {
    expect(filePatterns("src/cart.ts")).toEqual(["src/cart.ts", "*/src/cart.ts"]);
    expect(filePatterns("/w/app")).toEqual(["/w/app"]);
    expect(filePatterns("*.ts")).toEqual(["*.ts"]);
    expect(filePatterns("src/")).toEqual(["src", "src/*", "*/src", "*/src/*"]);
    expect(filePatterns("a?[b].ts")).toEqual(["a[?][[]b].ts", "*/a[?][[]b].ts"]);
    expect(filePatterns(".//src//a.ts")).toEqual(filePatterns("src/a.ts"));
  });
});

describe("ftsMatch", () => {
  it("quotes every term and joins them with FTS5 operators of its own", () => {
    const query = parseQuery('retry "S3 bucket" upl* -flaky -"old plan"', NOW);
    expect(ftsMatch(query)).toBe('("retry" AND "S3 bucket" AND "upl"*) NOT ("flaky" OR "old plan")');
    expect(ftsMatch(parseQuery("role:user", NOW))).toBeUndefined();
  });

  it("searches a prefix as the words an expansion gives, quoted", () => {
    const query = parseQuery('upl* "x y" -old*', NOW);
    const expand = (prefix: string) => (prefix === "upl" ? ["upload", 'upl"oad'] : undefined);
    expect(ftsMatch(query, expand)).toBe('(("upload" OR "upl""oad") AND "x y") NOT ("old"*)');
    expect(ftsMatch(parseQuery("upl*", NOW), () => [])).toBe('"upl"');
    expect(ftsMatch(parseQuery("upl*", NOW), () => undefined)).toBe('"upl"*');
    // A prefix of several words: the phrase's last word expanded, each completion a phrase.
    expect(ftsMatch(parseQuery("foo-ba*", NOW), (p) => (p === "ba" ? ["bar", "baz"] : undefined))).toBe(
      '("foo bar" OR "foo baz")',
    );
  });

  it("bounds an excluded prefix as a positive one: the words its expansion gives, never every completion", () => {
    const expand = (prefix: string) => (prefix === "ab" ? ["abc", "abd"] : prefix === "zz" ? [] : undefined);
    expect(ftsMatch(parseQuery("x -ab*", NOW), expand)).toBe('("x") NOT (("abc" OR "abd"))');
    expect(ftsMatch(parseQuery("x -foo-ab*", NOW), expand)).toBe('("x") NOT (("foo abc" OR "foo abd"))');
    expect(ftsMatch(parseQuery("x -zz*", NOW), expand)).toBe('("x") NOT ("zz")');
  });

  it("never lets the user's text become FTS5 syntax (any input: an error, or only quoted terms)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        let match: string | undefined;
        try {
          match = ftsMatch(parseQuery(text, NOW));
        } catch (error) {
          expect(error).toBeInstanceOf(QueryError);
          return;
        }
        if (match === undefined) return;
        // Outside of quoted strings only our own operators, parentheses, spaces and prefix stars remain.
        const outside = match.replace(/"(?:[^"]|"")*"/gu, "");
        expect(outside).toMatch(/^(?:[ ()*]|AND|OR|NOT)*$/u);
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps every word of the input as a term, in order", () => {
    const word = fc
      .stringMatching(/^[a-z0-9]{1,12}$/u)
      .filter((w) => !/^(cwd|role|since|before|model|label)$/u.test(w));
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 10 }), (words) => {
        expect(parseQuery(words.join("  "), NOW).terms.map((t) => t.text)).toEqual(words);
      }),
    );
  });
});
