// One Node bundle (esbuild): a single ESM file for Node >= 20, minified, from the sources.
import { build } from "esbuild";

/** Bundles `entry` into `outfile`; returns its size in bytes. */
export async function bundleNode({ entry, outfile, external = [] }) {
  const result = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    minify: true,
    platform: "node",
    target: "node20",
    format: "esm",
    conditions: ["source"],
    mainFields: ["module", "main"],
    external,
    legalComments: "none",
    metafile: true,
  });
  return Object.values(result.metafile.outputs)[0].bytes;
}
