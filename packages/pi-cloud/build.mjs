// Bundles the extension into one file: pi loads it with no install step beyond the package.
import { build } from "esbuild";

const result = await build({
  entryPoints: [new URL("./src/index.ts", import.meta.url).pathname],
  outfile: new URL("./dist/cloud.mjs", import.meta.url).pathname,
  bundle: true,
  minify: true,
  platform: "node",
  target: "node20",
  format: "esm",
  conditions: ["source"],
  mainFields: ["module", "main"],
  external: ["@mariozechner/pi-coding-agent"],
  legalComments: "none",
  metafile: true,
});
const bytes = Object.values(result.metafile.outputs)[0].bytes;
console.log(`packages/pi-cloud/dist/cloud.mjs: ${(bytes / 1024).toFixed(1)} KB`);
