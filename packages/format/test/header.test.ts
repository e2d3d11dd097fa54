import { readFileSync } from "node:fs";
import { inRepoCorpus, loadCorpus } from "@pisync/testing/fixtures";
import { describe, expect, it } from "vitest";
import {
  encodeUtf8,
  findHeader,
  headerVersion,
  indexSession,
  parseSession,
  type SessionIndex,
  trimFileStartBom,
} from "../src/index.js";

const header = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';
const entry = '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}';

describe("findHeader", () => {
  it("finds the first line's header and where the entries start", () => {
    const bytes = encodeUtf8(`${header}\n${entry}\n`);
    const found = findHeader(bytes);
    expect(found.header?.id).toBe("s1");
    expect(found.headerLine).toBe(1);
    expect(found.end).toBe(encodeUtf8(header).length + 1);
    expect(found.problems).toEqual([]);
  });

  it("reads past blank and invalid lines and a byte order mark at the file's start, as pi does", () => {
    const bytes = encodeUtf8(`\uFEFF\n  \n{not json\n${header}\n`);
    const found = findHeader(bytes);
    expect(found.header?.id).toBe("s1");
    expect(found.headerLine).toBe(4);
    expect(findHeader(encodeUtf8(`\uFEFF${header}\n`)).header?.id).toBe("s1");
    // Anywhere but the file's start, a byte order mark makes the line invalid JSON.
    expect(findHeader(encodeUtf8(`\n\uFEFF${header}\n`)).header).toBeUndefined();
  });

  it("reads past one oh-my-pi title slot and reports it", () => {
    const title = '{"type":"title","title":"my work"}';
    const found = findHeader(encodeUtf8(`${title}\n${header}\n${entry}\n`));
    expect(found.header?.id).toBe("s1");
    expect([found.titleLine, found.headerLine]).toEqual([1, 2]);
    expect(found.problems.map((p) => [p.kind, p.line])).toEqual([["title-slot", 1]]);
    expect(found.end).toBe(encodeUtf8(title).length + encodeUtf8(header).length + 2);
  });

  it("refuses a file whose first value is not a header, and reads no unfinished line", () => {
    const found = findHeader(encodeUtf8(`${entry}\n${header}\n`));
    expect(found.header).toBeUndefined();
    expect(found.problems.map((p) => [p.kind, p.line])).toEqual([["missing-header", 1]]);
    const title = '{"type":"title"}';
    expect(findHeader(encodeUtf8(`${title}\n${title}\n${header}\n`)).header).toBeUndefined();
    expect(findHeader(encodeUtf8(header))).toEqual({ problems: [] });
    expect(findHeader(new Uint8Array())).toEqual({ problems: [] });
  });
});

describe("headerVersion and the byte order mark", () => {
  it("reads the declared version, 1 when there is none", () => {
    expect(headerVersion({ type: "session", id: "a", version: 2 } as never)).toBe(2);
    expect(headerVersion({ type: "session", id: "a" } as never)).toBe(1);
    expect(headerVersion({ type: "session", id: "a", version: "3" } as never)).toBe(1);
  });

  it("trims a byte order mark at the file's start only", () => {
    expect(trimFileStartBom("\uFEFF{}", true)).toBe("{}");
    expect(trimFileStartBom("\uFEFF{}", false)).toBe("\uFEFF{}");
    expect(trimFileStartBom("{}", true)).toBe("{}");
  });
});

/** The parent walk from the default leaf, without the path the scan kept. */
function walkFromDefaultLeaf(index: SessionIndex): string[] {
  const path: string[] = [];
  const seen = new Set<number>();
  for (let r = index.defaultLeaf; r && !seen.has(r.index); r = index.parentOf(r)) {
    seen.add(r.index);
    path.unshift(`${r.line}`);
  }
  return path;
}

describe("the default leaf's path kept by the scan", () => {
  it("is the parent walk's path for every fixture that has one", async () => {
    const { pathTo } = await import("../src/index.js");
    let kept = 0;
    for (const fixture of loadCorpus(inRepoCorpus)) {
      const index = indexSession(readFileSync(fixture.jsonl));
      if (!index.defaultLeaf) continue;
      if (index.defaultPath) kept++;
      expect(
        pathTo(index, index.defaultLeaf).records.map((r) => `${r.line}`),
        fixture.name,
      ).toEqual(walkFromDefaultLeaf(index));
    }
    expect(kept).toBeGreaterThan(10);
  });

  it("is not taken when an id repeats, a parent comes after its child, or ids come from v1 migration", () => {
    const line = (id: string, parentId: string | null) =>
      JSON.stringify({ type: "message", id, parentId, timestamp: "t", message: { role: "user", content: id } });
    const file = (...lines: string[]) => encodeUtf8(`${[header, ...lines].join("\n")}\n`);
    // "a" written again after its child: the walk goes back to the later "a" (a cycle), not the first.
    const repeated = parseSession(file(line("a", null), line("b", "a"), line("a", "b")));
    expect(repeated.index.defaultPath).toBeUndefined();
    expect(repeated.problems.map((p) => p.kind)).toContain("duplicate-id");
    const later = parseSession(file(line("b", "a"), line("c", "b"), line("a", null), line("d", "c")));
    expect(later.index.defaultPath).toBeUndefined();
    expect(walkFromDefaultLeaf(later.index)).toEqual(["4", "2", "3", "5"]);
    const v1 = parseSession(encodeUtf8('{"type":"session","id":"s"}\n{"type":"message","id":"x","message":{}}\n'));
    expect(v1.index.defaultPath).toBeUndefined();
    const plain = parseSession(file(line("a", null), line("b", "a"), line("c", "a")));
    expect(plain.index.defaultPath?.map((r) => r.id)).toEqual(["a", "c"]);
  });
});
