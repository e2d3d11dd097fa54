/**
 * What the shipped Lambda bundle reads at a cold start: its entry and the chunks the entry
 * imports statically (`lambdaBuildOptions`, as the stack builds it). Code an append never runs
 * (the search index and its SQLite, the library's pages, the share viewer, the OpenAPI
 * document, Secrets Manager, the preview image's renderer) must be in chunks loaded on demand:
 * in the bundle, not in that set.
 * Its time is measured by `npm run bench:bundle`; the bundle's behaviour by `bundle.test.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, type Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lambdaBuildOptions } from "../lib/bundling.js";

const entry = new URL("../../functions/api/src/lambda.ts", import.meta.url).pathname;

/** The source files in the outputs `from` imports statically (`from` included). */
function inputsReadFrom(metafile: Metafile, from: string): Set<string> {
  const outputs = new Set<string>();
  const visit = (path: string) => {
    if (outputs.has(path)) return;
    outputs.add(path);
    for (const imported of metafile.outputs[path]?.imports ?? []) {
      if (imported.kind === "import-statement" && !imported.external) visit(imported.path);
    }
  };
  visit(from);
  return new Set([...outputs].flatMap((path) => Object.keys(metafile.outputs[path]?.inputs ?? {})));
}

/** Bytes of each source file in the outputs `from` imports statically (`from` included). */
function bytesReadFrom(metafile: Metafile, from: string): Map<string, number> {
  const outputs = new Set<string>();
  const visit = (path: string) => {
    if (outputs.has(path)) return;
    outputs.add(path);
    for (const imported of metafile.outputs[path]?.imports ?? []) {
      if (imported.kind === "import-statement" && !imported.external) visit(imported.path);
    }
  };
  visit(from);
  const bytes = new Map<string, number>();
  for (const path of outputs) {
    for (const [file, { bytesInOutput }] of Object.entries(metafile.outputs[path]?.inputs ?? {})) {
      bytes.set(file, (bytes.get(file) ?? 0) + bytesInOutput);
    }
  }
  return bytes;
}

describe("the Lambda bundle's cold start", () => {
  let out: string;
  let cold: Set<string>;
  let all: Set<string>;
  /** Bytes each source file takes in the outputs a cold start reads. */
  let coldBytes: Map<string, number>;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), "pisync-bundle-cold-"));
    const outfile = join(out, "index.mjs");
    const { metafile } = await build({ ...lambdaBuildOptions(entry, outfile), metafile: true, write: false });
    const entryOutput = Object.keys(metafile.outputs).find((path) => path.endsWith("/index.mjs"));
    if (!entryOutput) throw new Error("no entry among the outputs");
    cold = inputsReadFrom(metafile, entryOutput);
    coldBytes = bytesReadFrom(metafile, entryOutput);
    all = new Set(Object.values(metafile.outputs).flatMap((output) => Object.keys(output.inputs)));
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  const matching = (files: Set<string>, pattern: RegExp) => [...files].filter((file) => pattern.test(file));

  it.each([
    ["the search index and its SQLite", /packages\/search\/src\/aws\/s3-search-index\.ts$/],
    ["the embedded SQLite driver", /packages\/store\/src\/embedded\/sqlite\.ts$/],
    ["the library's pages", /packages\/viewer\/src\/library\//],
    ["the share viewer", /packages\/viewer\/src\/render\.ts$/],
    ["the OpenAPI document", /functions\/api\/src\/openapi\.ts$/],
    ["the Secrets Manager client", /node_modules\/@aws-sdk\/client-secrets-manager\//],
    ["the preview image's renderer", /functions\/api\/src\/preview\/render\.ts$/],
    ["satori", /node_modules\/satori\//],
    ["resvg", /node_modules\/@resvg\/resvg-wasm\//],
    ["the MCP SDK's server", /node_modules\/@modelcontextprotocol\/sdk\/dist\/esm\/server\/mcp\.js$/],
  ])("loads %s on demand only", (_what, pattern) => {
    expect(matching(all, pattern), "in the bundle").not.toEqual([]);
    expect(matching(cold, pattern), "read at a cold start").toEqual([]);
  });

  it("leaves express out: the MCP SDK is imported by the subpaths the server needs only", () => {
    expect(matching(all, /node_modules\/(express|express-rate-limit|cors)\//)).toEqual([]);
  });

  it("keeps the MCP SDK's zod (classic zod, JSON Schema) out of the cold start's zod", () => {
    // The API's zod/mini takes about 52 KB; the SDK's use of the same files made it 88 KB.
    const zod = [...coldBytes].filter(([file]) => /node_modules\/zod\//.test(file));
    expect(zod.filter(([file]) => file.endsWith(".cjs"))).toEqual([]);
    expect(zod.reduce((sum, [, bytes]) => sum + bytes, 0)).toBeLessThan(60 * 1024);
  });

  it("reads what an append needs at a cold start", () => {
    for (const needed of [/packages\/core\/src\/append\.ts$/, /packages\/search\/src\/aws\/marks\.ts$/]) {
      expect(matching(cold, needed)).not.toEqual([]);
    }
  });
});
