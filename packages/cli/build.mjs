// Bundles the CLI into one file with no runtime dependency beyond Node >= 20.
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { bundleNode } from "../../scripts/bundle-node.mjs";

const outfile = new URL("./dist/pisync.mjs", import.meta.url).pathname;
const bytes = await bundleNode({ entry: new URL("./src/bin.ts", import.meta.url).pathname, outfile });
// A small young generation keeps `pisync watch` small while idle (V8 reads it only at start).
const code = readFileSync(outfile, "utf8").replace(/^#!.*\n/, "");
writeFileSync(outfile, `#!/usr/bin/env -S node --max-semi-space-size=1\n${code}`);
chmodSync(outfile, 0o755);
console.log(`packages/cli/dist/pisync.mjs: ${(bytes / 1024).toFixed(1)} KB`);
