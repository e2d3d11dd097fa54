/**
 * V8's compile cache shipped with a bundle (Node ≥ 22.1, `module.enableCompileCache`): made at
 * build time by importing the bundle once, so that a cold start deserialises the code of its
 * entry and static chunks instead of compiling their text.
 *
 * How Node 22 keys the cache (`src/compile_cache.cc`), and what this module does about each part:
 * - a folder per `<node version>-<arch>-<V8's cachedDataVersionTag>-<uid>`; the V8 tag hashes
 *   V8's version, its flags (`--max-old-space-size`, `--expose-gc`, … change it) and the CPU's
 *   features. The cache ships in `compile-cache/<version>-<arch>-<tag>/`, without the uid: the
 *   loader links it under the running uid in the temp folder, and uses it only when the running
 *   Node's version, arch and V8 tag are the same (else it compiles, as without a cache);
 * - a file per module, named by the CRC-32 of its type (1 byte, ES module = 1) and its URL, so a
 *   cache is valid at one absolute path only: {@link writeCompileCache} renames the files for
 *   the folder the bundle runs from (`taskRoot`; Lambda's is `/var/task`);
 * - each file holds the source's size and CRC-32, checked on read: a stale entry is compiled.
 * V8 makes the cache right after compiling a module, before it runs: it holds the code compiled
 * eagerly (module top levels), not the functions compiled later on the first request.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { crc32 } from "node:zlib";

/** The folder beside the bundle that holds its compile cache. */
export const COMPILE_CACHE_DIR = "compile-cache";

/** Node's `CachedCodeType::kESM`: the first byte of a cache file's key. */
const ESM_TYPE = Buffer.from([1]);

/** A cache file's name: the CRC-32 of the module's type and URL, as Node 22 names it. */
export function cacheKeyOf(url: string): string {
  return crc32(Buffer.from(url), crc32(ESM_TYPE)).toString(16).padStart(8, "0");
}

/** The module files of a bundle in `dir` (the entry and its chunks), relative to it. */
function moduleFiles(dir: string, under = ""): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((item) => {
    const path = join(under, item.name);
    if (item.isDirectory()) return item.name === COMPILE_CACHE_DIR ? [] : moduleFiles(dir, path);
    return item.name.endsWith(".mjs") ? [path] : [];
  });
}

export interface CompileCacheOptions {
  /** The Node executable that makes the cache: the runtime's exact version and arch. */
  node: string;
  /** The module whose import fills the cache (its static imports included), relative to `outDir`. */
  entry: string;
  /** The folder the bundle runs from (Lambda: `/var/task`); by default where it was built. */
  taskRoot?: string;
  /** V8 flags the runtime starts Node with: they are part of the cache's key. */
  nodeFlags?: string[];
}

/** What {@link writeCompileCache} made. */
export interface CompileCache {
  /** The cache's folder name: `<node version>-<arch>-<V8 tag>`. */
  tag: string;
  /** The modules cached, relative to the bundle's folder. */
  modules: string[];
}

/**
 * Imports `entry` of the bundle in `outDir` once under `node` and keeps the compile cache it
 * writes in `outDir/compile-cache/<tag>/`, its files named for `taskRoot`. Importing runs the
 * modules' top levels only (the function's `init` is not called), so it needs no settings.
 * @throws Error when Node writes no cache (a Node without `module.enableCompileCache`)
 */
export function writeCompileCache(outDir: string, options: CompileCacheOptions): CompileCache {
  const made = mkdtempSync(join(outDir, ".compile-cache-"));
  try {
    const url = pathToFileURL(join(outDir, options.entry)).href;
    const probe = `import{cachedDataVersionTag as t}from"node:v8";await import(${JSON.stringify(url)});console.log(\`\${process.version}-\${process.arch}-\${t().toString(16).padStart(8,"0")}\`)`;
    const output = execFileSync(options.node, [...(options.nodeFlags ?? []), "--input-type=module", "-e", probe], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, NODE_COMPILE_CACHE: made },
    });
    const tag = output.trim().split("\n").pop() as string;
    const [written] = readdirSync(made);
    if (!written) throw new Error(`${options.node} wrote no compile cache (Node ≥ 22.1 makes one)`);
    const target = join(outDir, COMPILE_CACHE_DIR, tag);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    const taskRoot = options.taskRoot ?? outDir;
    const cached = new Set(readdirSync(join(made, written)));
    const modules: string[] = [];
    for (const file of moduleFiles(outDir)) {
      const key = cacheKeyOf(pathToFileURL(join(outDir, file)).href);
      if (!cached.has(key)) continue;
      const shipped = join(target, cacheKeyOf(pathToFileURL(join(taskRoot, file)).href));
      renameSync(join(made, written, key), shipped);
      // Node writes its files for its own user only; Lambda runs the code as another one.
      chmodSync(shipped, 0o644);
      modules.push(file);
    }
    return { tag, modules };
  } finally {
    rmSync(made, { recursive: true, force: true });
  }
}

/**
 * The source of a loader module that enables the shipped compile cache, then imports the app
 * (`app`, beside it) and exports its `handler` and `init`. It must be a module of its own: a
 * module's static imports are compiled before any of its code runs. When the cache does not fit
 * the running Node (another version, arch or V8 flags) or cannot be linked, the app loads as
 * without it.
 */
export function compileCacheLoader(app: string): string {
  return `import{existsSync,mkdirSync,readlinkSync,rmSync,symlinkSync}from"node:fs";import*as nodeModule from"node:module";import{tmpdir}from"node:os";import{fileURLToPath}from"node:url";import{cachedDataVersionTag}from"node:v8";
try{
const tag=\`\${process.version}-\${process.arch}-\${cachedDataVersionTag().toString(16).padStart(8,"0")}\`;
const shipped=fileURLToPath(new URL(${JSON.stringify(`./${COMPILE_CACHE_DIR}/`)}+tag,import.meta.url));
if(existsSync(shipped)){
// Node looks for <dir>/<tag>-<uid>: the running user's name for the shipped folder, in a writable place.
const uid=process.getuid?.()??"",dir=tmpdir()+"/pisync-compile-cache-"+uid,own=dir+"/"+tag+(uid===""?"":"-"+uid);
mkdirSync(dir,{recursive:true});
let linked;try{linked=readlinkSync(own)}catch{}
if(linked!==shipped){rmSync(own,{force:true});symlinkSync(shipped,own)}
// Node < 22.1 has none (and another version's tag would not match above anyway).
nodeModule.enableCompileCache?.(dir);
}
}catch{}
const app=await import(${JSON.stringify(`./${app}`)});
export const handler=app.handler,init=app.init;
`;
}

/** Writes {@link compileCacheLoader} as `loader` (say `index.mjs`) in `outDir`. */
export function writeCompileCacheLoader(outDir: string, loader: string, app: string): void {
  writeFileSync(join(outDir, loader), compileCacheLoader(app));
}
