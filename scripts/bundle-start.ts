/**
 * What a start of a bundled ES module reads: the file and the files it imports statically
 * (`import … from "./x.mjs"`), transitively. A code-split bundle's dynamic `import()`s are left
 * out: they are read when the code that needs them runs.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Relative static imports in minified or plain ESM (`import{a as b}from"./c.mjs"`, `import"./d.mjs"`). */
const STATIC_IMPORT = /\bimport\s*(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+)?\s*(?:from\s*)?"(\.\.?\/[^"]+)"/g;

/** Every file a start of `path` reads, with its size in bytes. */
export function readAtStart(path: string, found = new Map<string, number>()): Map<string, number> {
  if (found.has(path)) return found;
  const code = readFileSync(path, "utf8");
  found.set(path, Buffer.byteLength(code));
  for (const m of code.matchAll(STATIC_IMPORT)) readAtStart(join(dirname(path), m[1]), found);
  return found;
}

/** The bytes a start of `path` reads. */
export function startBytes(path: string): number {
  return [...readAtStart(path).values()].reduce((n, size) => n + size, 0);
}
