/**
 * How the Lambda function is bundled (esbuild): the stack, the bundle benchmark and the bundle
 * test all use these options, so what is measured and tested is what ships.
 */
import { copyFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BuildOptions } from "esbuild";

/**
 * The search adapter's SQLite (node-sqlite3-wasm) reads its WebAssembly module from the folder
 * of the script that loads it (`__dirname`): in the bundle, the bundle's own folder.
 */
const SQLITE_WASM = createRequire(new URL("../../packages/search/package.json", import.meta.url)).resolve(
  "node-sqlite3-wasm/dist/node-sqlite3-wasm.wasm",
);

/** The preview renderer's files (`functions/api/src/preview/render.ts`'s `PREVIEW_ASSETS`). */
const apiRequire = createRequire(new URL("../../functions/api/package.json", import.meta.url));
const PREVIEW_FILES = [
  "@resvg/resvg-wasm/index_bg.wasm",
  "@fontsource/inter/files/inter-latin-400-normal.woff",
  "@fontsource/inter/files/inter-latin-700-normal.woff",
].map((asset) => apiRequire.resolve(asset));

/**
 * The MCP SDK's zod (`zod`, `zod/v4`, `zod/v4-mini`, `zod/v3`: classic zod and JSON Schema),
 * from zod's CommonJS files: other files than the ES modules of `zod/mini` the API validates
 * with. esbuild splits chunks by file, so the SDK's use of zod's shared ES modules would put
 * the parts it needs into the chunk every cold start reads (about 36 KB); apart, they stay in
 * the MCP chunk. zod keeps its registry and config on `globalThis`, shared by both copies.
 * `zod/mini` is named too, since an alias of `zod` also takes its subpaths.
 */
const zodRequire = createRequire(apiRequire.resolve("@modelcontextprotocol/sdk/server/mcp.js"));
const MCP_ZOD = {
  zod: zodRequire.resolve("zod"),
  "zod/v4": zodRequire.resolve("zod/v4"),
  "zod/v4-mini": zodRequire.resolve("zod/v4-mini"),
  "zod/v3": zodRequire.resolve("zod/v3"),
  "zod/mini": zodRequire.resolve("zod/mini").replace(/\.cjs$/, ".js"),
};

export const LAMBDA_BUNDLE = {
  target: "node22",
  minify: true,
  // ESM builds where packages ship them (smaller, tree-shaken); workspace packages from source.
  mainFields: ["module", "main"],
  conditions: ["source", "module"],
  // `require` and `__dirname` for the CommonJS packages bundled into this ES module. Every output
  // file gets the banner; `__dirname` is the bundle's folder for the entry and for its chunks
  // (in `chunks/`) alike, since the files read beside the bundle (`assets`) are there.
  banner:
    "import{createRequire as __cr}from'module';import{fileURLToPath as __fu}from'url';const require=__cr(import.meta.url);const __dirname=__fu(new URL(/\\/chunks\\/[^/]*$/.test(import.meta.url)?'..':'.',import.meta.url));",
  /**
   * Files the bundle reads beside itself: the WebAssembly SQLite of search; the preview image
   * renderer's WebAssembly (resvg) and fonts (its chunk loads on the first preview only).
   */
  assets: [SQLITE_WASM, ...PREVIEW_FILES],
  /**
   * secretlint's rule preset loads node-forge (250 KB) lazily, only to open `.p12` files from
   * disk; shares mask text (ext `.jsonl`), so that chunk (the import path below, as the pinned
   * 11.7.1 names it) is never loaded and stays out.
   */
  external: ["./index-BDnqZat0.js"],
  /**
   * Lambda gives the role's credentials in the environment: the SDK's default chain (profiles,
   * SSO, instance metadata, and the STS/SSO clients they load) is replaced by the environment
   * provider, which takes about a fifth off the bundle's import (`npm run bench:bundle`).
   */
  alias: {
    "@aws-sdk/credential-provider-node": fileURLToPath(
      new URL("../../functions/api/src/lambda-credentials.ts", import.meta.url),
    ),
    ...MCP_ZOD,
  } as Record<string, string>,
  /**
   * Where the AWS SDK comes from: bundled (pinned, minified) starts faster than the runtime's
   * unminified copy, which is also not necessarily the version tested here (`npm run bench:bundle`).
   */
  sdk: "bundled" as SdkSource,
  /**
   * Code only some requests need (the share page's Markdown, highlighting and masking; the
   * OpenAPI document) is imported dynamically and goes to chunks of its own (`chunks/`), which
   * an API request's cold start never reads or compiles.
   */
  splitting: true,
};

/** The function's handler, as Lambda names it: `index.mjs`'s `handler`. */
export const LAMBDA_HANDLER = "index.handler";

/** What the bundle leaves out: node-forge's chunk, and the SDK when the runtime gives it. */
export function lambdaExternals(sdk: SdkSource = LAMBDA_BUNDLE.sdk): string[] {
  return sdk === "runtime" ? [...LAMBDA_BUNDLE.external, AWS_SDK_PACKAGES] : LAMBDA_BUNDLE.external;
}

/**
 * The AWS SDK v3 packages, which Lambda's Node.js runtimes provide (`npm run bench:bundle`
 * measures the bundle with and without them).
 */
export const AWS_SDK_PACKAGES = "@aws-sdk/*";

/** Where the function's AWS SDK comes from: bundled into it, or the Lambda runtime's own. */
export type SdkSource = "bundled" | "runtime";

/**
 * esbuild's options for the function bundle of `entry`, as the stack builds it (without source
 * maps): `outfile` (say `dist/index.mjs`) is the module Lambda imports; the chunks it imports on
 * demand go beside it, in `chunks/`.
 */
export function lambdaBuildOptions(entry: string, outfile: string, sdk: SdkSource = LAMBDA_BUNDLE.sdk): BuildOptions {
  const extension = extname(outfile);
  return {
    entryPoints: [entry],
    outdir: dirname(outfile),
    entryNames: basename(outfile, extension),
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": extension },
    splitting: LAMBDA_BUNDLE.splitting,
    bundle: true,
    platform: "node",
    format: "esm",
    logLevel: "error",
    target: LAMBDA_BUNDLE.target,
    minify: LAMBDA_BUNDLE.minify,
    mainFields: LAMBDA_BUNDLE.mainFields,
    conditions: LAMBDA_BUNDLE.conditions,
    external: lambdaExternals(sdk),
    alias: LAMBDA_BUNDLE.alias,
    banner: { js: LAMBDA_BUNDLE.banner },
  };
}

/** Copies the files the bundle reads beside itself ({@link LAMBDA_BUNDLE}'s `assets`) into its folder. */
export function copyLambdaAssets(outDir: string): void {
  for (const asset of LAMBDA_BUNDLE.assets) copyFileSync(asset, join(outDir, basename(asset)));
}
