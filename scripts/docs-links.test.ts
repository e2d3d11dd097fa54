/**
 * Every relative link of README.md and docs/*.md resolves: the file exists and, for `#anchor`,
 * so does a heading with that anchor (GitHub's rule). Links inside code are not links. Also the
 * README stays a five-minute read.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repo = resolve(new URL("..", import.meta.url).pathname);
const pages = [
  join(repo, "README.md"),
  ...readdirSync(join(repo, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(repo, "docs", name)),
];

/** The text without fenced code blocks and inline code (a `[x](y)` there is not a link). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const [, heading] of withoutFences.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const text = (heading as string).replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count ? `${base}-${count}` : base);
  }
  return anchors;
}

/** Every link and image target of a page, as written. */
function targetsOf(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1] as string);
  return [...inline, ...references];
}

/** What is wrong with one relative link of `page`, or undefined when it resolves. */
function problemOf(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: …
  const [path, anchor] = target.split("#") as [string, string | undefined];
  const file = path ? resolve(dirname(page), decodeURIComponent(path)) : page;
  const name = relative(repo, page);
  if (!existsSync(file)) {
    return `${name} links to ${relative(repo, file)}, which does not exist (if another branch adds it, run this test after the merge)`;
  }
  if (anchor && file.endsWith(".md") && statSync(file).isFile()) {
    if (!anchorsOf(readFileSync(file, "utf8")).has(anchor)) {
      return `${name} links to ${target}: ${relative(repo, file)} has no heading with the anchor #${anchor}`;
    }
  }
  return undefined;
}

describe("the docs' links", () => {
  it("every relative link of README.md and docs/*.md names a file that exists, and a heading for #anchors", () => {
    const problems = pages.flatMap((page) =>
      targetsOf(readFileSync(page, "utf8")).flatMap((target) => problemOf(page, target) ?? []),
    );
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("the checker finds links (and only outside code), and anchors as GitHub makes them", () => {
    const readme = readFileSync(join(repo, "README.md"), "utf8");
    expect(targetsOf(readme)).toContain("docs/cli.md");
    expect(targetsOf(readme)).toContain("docs/share-tree-desktop.png");
    expect(targetsOf("`[a](nope.md)`\n```\n[b](nope.md)\n```\n[c](yes.md)")).toEqual(["yes.md"]);
    expect([...anchorsOf("## Opening a session (`npm run bench:format`)\n## A b\n## A b")]).toEqual([
      "opening-a-session-npm-run-benchformat",
      "a-b",
      "a-b-1",
    ]);
    expect(problemOf(join(repo, "README.md"), "docs/no-such-page.md")).toContain(
      "README.md links to docs/no-such-page.md, which does not exist",
    );
    expect(problemOf(join(repo, "README.md"), "docs/cli.md#no-such-heading")).toContain(
      "docs/cli.md has no heading with the anchor #no-such-heading",
    );
  });

  it("the README is a five-minute read: at most 250 lines, and it names no test count that could drift", () => {
    const readme = readFileSync(join(repo, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
    expect(readme).toContain("npm start -- --port");
    expect(readme).not.toMatch(/\d[\d,]* tests\b/);
  });
});
