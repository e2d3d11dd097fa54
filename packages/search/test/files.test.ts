import { describe, expect, it } from "vitest";
import { cdTargets, filesTouched, MAX_FILES_PER_ENTRY, MAX_PATH_CHARS, normalisePath } from "../src/files.js";

describe("the files an entry touched", () => {
  it("takes the path of read, edit, write, ls, grep and find, never a pattern or another tool's", () => {
    const calls = [
      { name: "read", arguments: { path: "src/a.ts" } },
      { name: "edit", arguments: { path: "./src/b.ts", oldText: "x", newText: "y" } },
      { name: "write", arguments: { path: "/abs/c.ts", content: "" } },
      { name: "ls", arguments: { path: "lib/" } },
      { name: "grep", arguments: { pattern: "needle", path: "docs" } },
      { name: "find", arguments: { pattern: "*.md" } },
      { name: "fetch", arguments: { path: "not/a/file" } },
      { name: "read", arguments: { path: 42 } },
      { name: "read", arguments: null },
    ];
    expect(filesTouched(calls)).toEqual(["src/a.ts", "src/b.ts", "/abs/c.ts", "lib", "docs"]);
  });

  it("takes the folders of bash cd, quoted or not, after && ; | or a new line", () => {
    expect(cdTargets("cd app && npm test; cd \"my dir\" || (cd 'q')\ncd - ; cd\n echo cd x; cd ~/w")).toEqual([
      "app",
      "my dir",
      "q",
      "~/w",
    ]);
    expect(filesTouched([{ name: "bash", arguments: { command: "cd pkg/../api && ls" } }], ["cd /tmp/x/"])).toEqual([
      "api",
      "/tmp/x",
    ]);
  });

  it("bounds what a hostile entry adds: count, length, control characters, duplicates", () => {
    const many = Array.from({ length: 100 }, (_, i) => ({ name: "read", arguments: { path: `f${i}.ts` } }));
    expect(filesTouched(many)).toHaveLength(MAX_FILES_PER_ENTRY);
    expect(normalisePath(`${"a".repeat(5000)}.ts`)).toHaveLength(MAX_PATH_CHARS);
    expect(normalisePath("a\u0000b")).toBeUndefined();
    expect(normalisePath("  ")).toBeUndefined();
    expect(normalisePath("./")).toBeUndefined();
    expect(filesTouched([many[0], many[0]])).toEqual(["f0.ts"]);
  });
});
