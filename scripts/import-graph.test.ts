/**
 * The import graph's floors: no circle of modules (a type-only import counts: the files still
 * cannot be read apart), the Node entry built from nothing the Lambda entry owns, and the test
 * helpers importing nothing from `scripts/`. Read from each file's syntax tree (static imports,
 * re-exports, dynamic imports), relative specifiers resolved to the repository's files.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");

/** Where no circle is allowed. */
const ACYCLIC = [
  "functions/api/src",
  "packages/cli/src",
  "packages/store/src",
  "packages/core/src",
  "packages/format/src",
  "packages/protocol/src",
  "packages/search/src",
  "packages/viewer/src",
  "packages/testing/src",
  "packages/pi-cloud/src",
  "infra/lib",
  "scripts",
];

/** The module specifiers a file names: imports, re-exports, `import()`, `require()`. */
function specifiersOf(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === "require")) &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The TypeScript file a relative specifier names (`./x.js` is `./x.ts`), or undefined. */
function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [base, base.replace(/\.js$/, ".ts"), base.replace(/\.mjs$/, ".mts"), `${base}.ts`];
  return [...candidates, join(base, "index.ts")].find((path) => /\.(ts|mts|tsx)$/.test(path) && existsSync(path));
}

/** Every TypeScript source file under `dir` (no declaration files). */
function sourcesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => /\.(ts|mts|tsx)$/.test(f) && !f.endsWith(".d.ts") && !f.includes("node_modules"))
    .map((f) => join(ROOT, dir, f));
}

/** The files each file imports by a relative path. */
function graphOf(files: readonly string[]): Map<string, string[]> {
  return new Map(
    files.map((file) => [
      file,
      specifiersOf(file, readFileSync(file, "utf8")).flatMap((s) => resolveRelative(file, s) ?? []),
    ]),
  );
}

/** The graph's circles: each group of files that import one another (Tarjan's strongly connected components). */
function circlesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string) => {
    order.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const to of graph.get(file) ?? []) {
      if (!graph.has(to)) continue;
      if (!order.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file) as number, low.get(to) as number));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file) as number, order.get(to) as number));
      }
    }
    if (low.get(file) !== order.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || graph.get(file)?.includes(file)) circles.push(group.sort());
  };
  for (const file of graph.keys()) if (!order.has(file)) visit(file);
  return circles;
}

/** The files `entry` reaches by relative imports, itself included. */
function closureOf(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const s of specifiersOf(file, readFileSync(file, "utf8"))) {
      const to = resolveRelative(file, s);
      if (to) visit(to);
    }
  };
  visit(entry);
  return seen;
}

const rel = (file: string) => relative(ROOT, file);

describe("the import graph", () => {
  it("has no circle, type-only imports included", () => {
    const files = ACYCLIC.flatMap(sourcesUnder);
    expect(files.length).toBeGreaterThan(100);
    expect(circlesOf(graphOf(files)).map((group) => group.map(rel))).toEqual([]);
  });

  it("builds the Node entry from nothing the Lambda entry owns", () => {
    const reached = [...closureOf(join(ROOT, "functions/api/src/node.ts"))].map(rel);
    expect(reached).toContain("functions/api/src/marking-indexer.ts");
    expect(reached.filter((f) => /^functions\/api\/src\/lambda(-search)?\.ts$/.test(f))).toEqual([]);
  });

  it("keeps the test helpers from importing scripts", () => {
    const outside = sourcesUnder("packages/testing/src").flatMap((file) =>
      specifiersOf(file, readFileSync(file, "utf8"))
        .map((s) => resolveRelative(file, s))
        .filter((to): to is string => to !== undefined && !rel(to).startsWith("packages/testing/"))
        .map((to) => `${rel(file)} → ${rel(to)}`),
    );
    expect(outside).toEqual([]);
  });

  it("the check sees a circle made of type-only imports, re-exports and dynamic imports", () => {
    const sources: Record<string, string> = {
      "/m/a.ts": 'import type { B } from "./b.js";',
      "/m/b.ts": 'export { c } from "./c.js";',
      "/m/c.ts": 'const a = await import("./a.js");',
      "/m/d.ts": 'import { a } from "./a.js";',
    };
    const graph = new Map(
      Object.entries(sources).map(([file, source]) => [
        file,
        specifiersOf(file, source).map((s) => resolve(dirname(file), s.replace(/\.js$/, ".ts"))),
      ]),
    );
    expect(circlesOf(graph)).toEqual([["/m/a.ts", "/m/b.ts", "/m/c.ts"]]);
  });
});
