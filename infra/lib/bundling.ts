/**
 * How the Lambda function is bundled (esbuild): the stack and the bundle benchmark both use
 * these options, so what is measured is what ships.
 */
import type { BuildOptions } from "esbuild";

export const LAMBDA_BUNDLE = {
  target: "node22",
  minify: true,
  // ESM builds where packages ship them (smaller, tree-shaken); workspace packages from source.
  mainFields: ["module", "main"],
  conditions: ["source"],
  banner: "import{createRequire as __cr}from'module';const require=__cr(import.meta.url);",
  /**
   * secretlint's rule preset loads node-forge (250 KB) lazily, only to open `.p12` files from
   * disk; shares mask text (ext `.jsonl`), so that chunk (the import path below, as the pinned
   * 11.7.1 names it) is never loaded and stays out.
   */
  external: ["./index-BDnqZat0.js"],
};

/** esbuild's options for the function bundle of `entry`, as the stack builds it (without source maps). */
export function lambdaBuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    logLevel: "error",
    target: LAMBDA_BUNDLE.target,
    minify: LAMBDA_BUNDLE.minify,
    mainFields: LAMBDA_BUNDLE.mainFields,
    conditions: LAMBDA_BUNDLE.conditions,
    external: LAMBDA_BUNDLE.external,
    banner: { js: LAMBDA_BUNDLE.banner },
  };
}
