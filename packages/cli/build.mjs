// Bundles the CLI into one file with no runtime dependency beyond Node >= 20.
import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { bundleNode } from "../../scripts/bundle-node.mjs";

const outfile = new URL("./dist/pisync.mjs", import.meta.url).pathname;
// Built beside, then renamed into place: a `pisync` started meanwhile (tests build in parallel
// while others run it) reads the old file or the new one, never half of one.
const temp = `${outfile}.${process.pid}.tmp`;
const bytes = await bundleNode({ entry: new URL("./src/bin.ts", import.meta.url).pathname, outfile: temp });
// A small young generation keeps `pisync watch` small while idle (V8 reads it only at start).
const code = readFileSync(temp, "utf8").replace(/^#!.*\n/, "");
writeFileSync(temp, `#!/usr/bin/env -S node --max-semi-space-size=1\n${code}`);
chmodSync(temp, 0o755);
renameSync(temp, outfile);
rmSync(`${temp}.map`, { force: true });
console.log(`packages/cli/dist/pisync.mjs: ${(bytes / 1024).toFixed(1)} KB`);
