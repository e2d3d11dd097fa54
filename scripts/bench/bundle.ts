/**
 * Lambda bundle benchmark (issue: deploy): size and cold import time of the function bundle,
 * built as the CDK stack builds it, against a naive bundle of the same entry (CJS-first module
 * resolution, not minified) measured in the same run. Targets: ≤ 400 KB minified, ≤ 100 ms
 * cold import.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { LAMBDA_BUNDLE, lambdaBuildOptions } from "../../infra/lib/bundling.js";

const entry = new URL("../../functions/api/src/lambda.ts", import.meta.url).pathname;
const out = mkdtempSync(join(tmpdir(), "pisync-bundle-"));

/** Builds a bundle with `options` (given the output file) and times its cold import. */
async function bundle(name: string, options: (outfile: string) => Parameters<typeof build>[0]) {
  const outfile = join(out, name, "index.mjs");
  await build(options(outfile));
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const ms = execFileSync(
      process.execPath,
      ["-e", `const t=performance.now();import(${JSON.stringify(outfile)}).then(()=>console.log(performance.now()-t))`],
      {
        encoding: "utf8",
        env: {
          ...process.env,
          PISYNC_BUCKET: "b",
          PISYNC_TABLE: "t",
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
        },
      },
    );
    times.push(Number(ms.trim()));
  }
  times.sort((a, b) => a - b);
  return { name, bytes: statSync(outfile).size, importMs: times[3] };
}

// Naive: the same entry, CJS-first resolution, not minified, nothing left out.
const naive = await bundle("naive", (outfile) => ({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  logLevel: "error",
  target: "node22",
  conditions: ["source"],
  banner: { js: LAMBDA_BUNDLE.banner },
}));
const shipped = await bundle("shipped", (outfile) => lambdaBuildOptions(entry, outfile));
rmSync(out, { recursive: true, force: true });
for (const b of [naive, shipped]) {
  console.log(`${b.name}: ${(b.bytes / 1024).toFixed(0)} KB, cold import ${b.importMs.toFixed(0)} ms`);
}
console.log(
  `shipped / naive: size ${(shipped.bytes / naive.bytes).toFixed(2)}×, import ${(shipped.importMs / naive.importMs).toFixed(2)}× ` +
    `(targets: ≤ 400 KB → ${shipped.bytes <= 400 * 1024 ? "met" : "NOT met"}, ≤ 100 ms → ${shipped.importMs <= 100 ? "met" : "NOT met"})`,
);
