/**
 * How the Lambda function is bundled (esbuild): the stack and the bundle benchmark both use
 * these options, so what is measured is what ships.
 */
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
