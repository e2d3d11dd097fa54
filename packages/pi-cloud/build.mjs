// Bundles the extension into one file: pi loads it with no install step beyond the package.
import { bundleNode } from "../../scripts/bundle-node.mjs";

const bytes = await bundleNode({
  entry: new URL("./src/index.ts", import.meta.url).pathname,
  outfile: new URL("./dist/cloud.mjs", import.meta.url).pathname,
  // pi provides its own packages to extensions (and maps the legacy names to them): never bundled.
  external: ["@earendil-works/*", "@mariozechner/*", "typebox", "@sinclair/typebox"],
});
console.log(`packages/pi-cloud/dist/cloud.mjs: ${(bytes / 1024).toFixed(1)} KB`);
