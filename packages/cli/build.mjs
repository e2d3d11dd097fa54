// Bundles the CLI into one file with no runtime dependency beyond Node >= 20.
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const result = await build({
  entryPoints: [new URL("./src/bin.ts", import.meta.url).pathname],
  outfile: new URL("./dist/pisync.mjs", import.meta.url).pathname,
  bundle: true,
  minify: true,
  platform: "node",
  target: "node20",
  format: "esm",
  conditions: ["source"],
  mainFields: ["module", "main"],

  legalComments: "none",
  metafile: true,
});
const out = new URL("./dist/pisync.mjs", import.meta.url).pathname;
// A small young generation keeps `pisync watch` small while idle (V8 reads it only at start).
const code = readFileSync(out, "utf8").replace(/^#!.*\n/, "");
writeFileSync(out, `#!/usr/bin/env -S node --max-semi-space-size=1\n${code}`);
chmodSync(out, 0o755);
const bytes = Object.values(result.metafile.outputs)[0].bytes;
console.log(`packages/cli/dist/pisync.mjs: ${(bytes / 1024).toFixed(1)} KB`);
