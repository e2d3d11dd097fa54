/**
 * `npm run install-cli`: builds the `pisync` command and installs it with `npm install -g`, so it
 * is on the PATH like any global npm command (and `npm uninstall -g @pisync/cli` removes it).
 *
 * What is installed is a package of the bundle's files (no dependency beyond Node): `pisync.mjs`,
 * the chunks it imports (its commands loaded on use) and `pisync-mcp.mjs`, packed in a temp
 * folder: the workspace package names others that are not published. It goes into npm's
 * global prefix (`npm prefix -g`; `npm_config_prefix` moves it) when that is writable by you, else
 * into `~/.local` (its `bin` is on the PATH of most Linux desktops): never with sudo.
 */
import { execFileSync } from "node:child_process";
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import packageJson from "../packages/cli/package.json" with { type: "json" };

// A path, not a URL's pathname: that one keeps spaces and non-ASCII letters percent-encoded.
const root = fileURLToPath(new URL("..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Whether `dir` (or the nearest folder above it that exists) is writable by this user. */
function writable(dir: string): boolean {
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    accessSync(at, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where npm puts a global package's commands under `prefix`. */
function binOf(prefix: string): string {
  return process.platform === "win32" ? prefix : join(prefix, "bin");
}

/**
 * The files of the build in `dist`: `pisync.mjs`, `pisync-mcp.mjs` and every chunk they name,
 * transitively (chunks of older builds, kept a while for a `pisync` still running, are left out).
 */
function bundleFiles(dist: string): string[] {
  const found = new Set<string>();
  const add = (path: string) => {
    if (found.has(path) || !existsSync(path)) return;
    found.add(path);
    for (const named of readFileSync(path, "utf8").matchAll(/["'](\.\/(?:chunks\/)?[\w-]+\.mjs)["']/g)) {
      add(join(dirname(path), named[1]));
    }
  };
  for (const entry of ["pisync.mjs", "pisync-mcp.mjs"]) add(join(dist, entry));
  return [...found].map((path) => relative(dist, path));
}

execFileSync(process.execPath, [join(root, "packages/cli/build.mjs")], { stdio: "inherit" });

const stage = mkdtempSync(join(tmpdir(), "pisync-install-cli-"));
try {
  writeFileSync(
    join(stage, "package.json"),
    `${JSON.stringify(
      {
        name: packageJson.name,
        version: packageJson.version,
        description: packageJson.description,
        license: packageJson.license,
        type: "module",
        bin: { pisync: "pisync.mjs" },
        engines: { node: ">=20" },
      },
      null,
      2,
    )}\n`,
  );
  const dist = join(root, "packages/cli/dist");
  for (const file of bundleFiles(dist)) {
    mkdirSync(dirname(join(stage, file)), { recursive: true });
    copyFileSync(join(dist, file), join(stage, file));
  }
  const tarball = execFileSync(npm, ["pack", "--silent", "--pack-destination", stage], { cwd: stage, encoding: "utf8" })
    .trim()
    .split("\n")
    .pop() as string;

  const globalPrefix = execFileSync(npm, ["prefix", "-g"], { encoding: "utf8" }).trim();
  const prefix = writable(globalPrefix) ? globalPrefix : join(homedir(), ".local");
  if (prefix !== globalPrefix) {
    console.log(`npm's global prefix ${globalPrefix} is not writable by you: installing into ${prefix} instead`);
  }
  mkdirSync(prefix, { recursive: true });
  execFileSync(
    npm,
    ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", "--silent", join(stage, tarball)],
    {
      stdio: ["ignore", "ignore", "inherit"],
    },
  );

  const bin = binOf(prefix);
  const onPath = (process.env.PATH ?? "").split(delimiter).includes(bin);
  console.log(`installed pisync ${packageJson.version} as ${join(bin, "pisync")}`);
  console.log(
    onPath
      ? "run: pisync --version"
      : `${bin} is not on your PATH: add it (export PATH="${bin}:$PATH" in your shell's profile), then run: pisync --version`,
  );
  console.log(`(npm uninstall -g${prefix === globalPrefix ? "" : ` --prefix ${prefix}`} @pisync/cli removes it)`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
