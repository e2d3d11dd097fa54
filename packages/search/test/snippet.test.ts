import { describe, expect, it } from "vitest";
import { parseQuery } from "../src/query.js";
import { snippetOf } from "../src/snippet.js";

const marked = (text: string, q: string) =>
  snippetOf(text, parseQuery(q).terms)
    .map((p) => (p.hit ? `[${p.text}]` : p.text))
    .join("");

describe("snippetOf", () => {
  it("marks whole words, prefixes and phrases, case-insensitively", () => {
    expect(marked("Retry the retrying retry", "retry")).toBe("[Retry] the retrying [retry]");
    expect(marked("Retry the retrying retry", "retr*")).toBe("[Retry] the [retrying] [retry]");
    expect(marked("the grey  heron, grey\nheron", '"grey heron"')).toBe("the [grey heron], [grey heron]");
  });

  it("matches across diacritics as the index does", () => {
    expect(marked("un café crème", "cafe")).toBe("un [café] crème");
  });

  it("cuts a window around the first match", () => {
    const text = `${"lorem ".repeat(100)}needle ${"ipsum ".repeat(100)}`;
    const snippet = marked(text, "needle");
    expect(snippet.length).toBeLessThanOrEqual(170);
    expect(snippet).toMatch(/^….*\[needle\].*…$/u);
  });

  it("does not mark excluded terms, and shows the start without any positive match", () => {
    expect(marked("alpha beta", "alpha -beta")).toBe("[alpha] beta");
    expect(marked("alpha beta", "role:user")).toBe("alpha beta");
  });

  it("keeps its place across emoji, diacritics and every kind of white space", () => {
    expect(marked("😀 Ångström\t\tnaïve \u00a0 déjà\r\nvu  needle", "needle")).toBe(
      "😀 Ångström naïve déjà vu [needle]",
    );
    expect(marked("😀😀 über\u2003ÜBER über", "uber")).toBe("😀😀 [über] [ÜBER] [über]");
    const long = `${"é ".repeat(200)}\n\nzèbre ${"😀 ".repeat(200)}`;
    expect(marked(long, "zebre")).toMatch(/^…(é )+\[zèbre\]( 😀)+ …$/u);
  });

  it("treats regular-expression characters in terms as text", () => {
    expect(marked("a (b+) c.d", "b+ c.d")).toBe("a ([b]+) [c.d]");
  });
});
