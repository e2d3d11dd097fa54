// Bundles the CLI with no runtime dependency beyond Node >= 20, into `dist/`:
// - `pisync.mjs`, the command, and the chunks it imports at start: the backup engine (what
//   `pisync watch` holds all day), at most 150 KB (a test checks it);
// - `chunks/`: the other commands (`team`, `service`, `insights`, `pull`…), each imported when it
//   runs, and the code they share;
// - `pisync-mcp.mjs`: `pisync mcp` with the MCP SDK, a bundle of its own that `pisync.mjs` loads
//   from beside itself (as a chunk, the SDK's use of zod would bring all of zod into the engine's
//   start: a module's exports any chunk uses are kept for all).
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { bundleNode } from "../../scripts/bundle-node.mjs";

const dist = fileURLToPath(new URL("./dist/", import.meta.url));
const chunks = join(dist, "chunks");
// A small young generation keeps `pisync watch` small while idle (V8 reads it only at start).
const SHEBANG = "#!/usr/bin/env -S node --max-semi-space-size=1";
/** A chunk no build wrote for this long is removed (a `pisync` of an older build may still load it). */
const STALE_MS = 3600_000;
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

// Each file is written beside, then renamed into place: a `pisync` started meanwhile (tests build
// in parallel while others run it) reads the old file or the new one, never half of one.
function writeInPlace(path, contents, mode) {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, contents);
  if (mode) chmodSync(temp, mode);
  renameSync(temp, path);
}

// The MCP bundle first: a `pisync.mjs` that is new finds a `pisync-mcp.mjs` at least as new.
const mcp = join(dist, "pisync-mcp.mjs");
const mcpTemp = `${mcp}.${process.pid}.tmp`;
const mcpBytes = await bundleNode({
  entry: fileURLToPath(new URL("./src/mcp-entry.ts", import.meta.url)),
  outfile: mcpTemp,
});
renameSync(mcpTemp, mcp);
rmSync(`${mcpTemp}.map`, { force: true });

const result = await build({
  entryPoints: { pisync: fileURLToPath(new URL("./src/bin.ts", import.meta.url)) },
  outdir: dist,
  entryNames: "[name]",
  chunkNames: "chunks/[name]-[hash]",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  // Each `import()` of a command becomes a file of its own, real ES modules: inside one file
  // esbuild would wrap them, and zod, shared with the engine, would be used before it is set up.
  splitting: true,
  minify: true,
  platform: "node",
  target: "node20",
  format: "esm",
  conditions: ["source"],
  mainFields: ["module", "main"],
  legalComments: "none",
  metafile: true,
  write: false,
});

// Chunks first (their names carry their content's hash): a new `pisync.mjs` finds every chunk it names.
const isMain = (file) => basename(file.path) === "pisync.mjs";
const files = [...result.outputFiles.filter((file) => !isMain(file)), ...result.outputFiles.filter(isMain)];
for (const file of files) {
  if (isMain(file)) writeInPlace(file.path, `${SHEBANG}\n${file.text.replace(/^#!.*\n/, "")}`, 0o755);
  else writeInPlace(file.path, file.contents);
}
const written = new Set(files.map((file) => file.path));
for (const name of existsSync(chunks) ? readdirSync(chunks) : []) {
  const path = join(chunks, name);
  if (!written.has(path) && Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
}

// What a start reads: `pisync.mjs` and the chunks it imports statically, transitively.
const outputs = result.metafile.outputs;
const atStart = new Set();
const reach = (output) => {
  if (atStart.has(output)) return;
  atStart.add(output);
  for (const i of outputs[output].imports) if (i.kind === "import-statement" && !i.external) reach(i.path);
};
reach(Object.keys(outputs).find((output) => output.endsWith("/pisync.mjs")));
const sum = (keys) => keys.reduce((n, key) => n + outputs[key].bytes, 0);
const onUse = Object.keys(outputs).filter((output) => !atStart.has(output));
console.log(`packages/cli/dist/pisync.mjs: ${kb(sum([...atStart]))} read at start (with ${atStart.size - 1} chunks)`);
console.log(
  `packages/cli/dist/chunks: ${kb(sum(onUse))} in ${onUse.length} chunks, read by the commands that use them`,
);
console.log(`packages/cli/dist/pisync-mcp.mjs: ${kb(mcpBytes)}, read by pisync mcp`);
