/**
 * Routes translate HTTP and call core: no file under `src/routes` reaches the storage package,
 * except for the types of what core answers (`import type`). Read from each file's syntax tree,
 * so no way of importing (a default, a namespace, a re-export, a dynamic import, a `require`)
 * slips by; the ports' types are refused too (a route handed a port reaches past core).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROUTES = join(import.meta.dirname, "../src/routes");
const STORE = /^@pisync\/store(\/|$)/;
/** The ports themselves: a route holding one reaches past core, whatever the import says. */
const PORTS = new Set(["MetaStore", "BlobStore", "Stores"]);

/** Each use of the storage package by a file that is not a type alone, as `line: text`. */
export function storeValueImports(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node) => {
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
    found.push(`${line}: ${node.getText(file).split("\n")[0]}`);
  };
  const named = (module: ts.Expression | undefined) =>
    module !== undefined && ts.isStringLiteral(module) && STORE.test(module.text);
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && named(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typesOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      const bindings = clause?.namedBindings;
      const ports = bindings && ts.isNamedImports(bindings) && bindings.elements.some((e) => PORTS.has(e.name.text));
      if (!typesOnly || ports) report(node);
    } else if (ts.isExportDeclaration(node) && named(node.moduleSpecifier) && !node.isTypeOnly) {
      report(node);
    } else if (ts.isImportEqualsDeclaration(node) && !node.isTypeOnly) {
      const ref = node.moduleReference;
      if (ts.isExternalModuleReference(ref) && named(ref.expression)) report(node);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === "require")) &&
      named(node.arguments[0])
    ) {
      report(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe("routes reach storage only through core", () => {
  it("no route file imports @pisync/store but for the types of answers", () => {
    const files = readdirSync(ROUTES, { recursive: true, encoding: "utf8" }).filter((f) => /\.(ts|mts|tsx)$/.test(f));
    expect(files.length).toBeGreaterThan(5);
    const offenders = files.flatMap((f) =>
      storeValueImports(f, readFileSync(join(ROUTES, f), "utf8")).map((use) => `${f}:${use}`),
    );
    expect(offenders).toEqual([]);
  });

  it("the check sees every way of importing a value, and lets types through", () => {
    const values = [
      'import { cardOf } from "@pisync/store";',
      'import { type SessionCard, cardOf } from "@pisync/store";',
      'import * as store from "@pisync/store";',
      'import store from "@pisync/store/aws";',
      'import "@pisync/store/embedded";',
      'export { cardOf } from "@pisync/store";',
      'const m = await import("@pisync/store");',
      'const m = require("@pisync/store/aws");',
      'import type { MetaStore } from "@pisync/store";',
      'import { type Stores } from "@pisync/store";',
    ];
    for (const source of values) expect(storeValueImports("x.ts", source), source).toHaveLength(1);
    const types = [
      'import { type SessionHead, type ShareRecord } from "@pisync/store";',
      'export type { ShareRecord } from "@pisync/store";',
      'import { cardOf } from "@pisync/core";',
      'import { x } from "@pisync/storefront";',
    ];
    for (const source of types) expect(storeValueImports("x.ts", source), source).toEqual([]);
  });
});
