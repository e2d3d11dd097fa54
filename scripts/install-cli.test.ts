/** `npm run install-cli` into a temp npm prefix: `pisync` lands on the PATH, says where, and runs. */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import packageJson from "../packages/cli/package.json" with { type: "json" };

const repo = fileURLToPath(new URL("..", import.meta.url));
const temp = mkdtempSync(join(tmpdir(), "pisync-install-cli-test-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** `npm run install-cli` with npm's global prefix moved to `prefix` (as `npm_config_prefix` does for any npm). */
function installCli(prefix: string, env: NodeJS.ProcessEnv = {}) {
  return spawnSync("npm", ["run", "--silent", "install-cli"], {
    cwd: repo,
    env: { ...process.env, npm_config_prefix: prefix, ...env },
    encoding: "utf8",
  });
}

it("installs pisync into npm's global prefix, says where, and `pisync --version` runs from the PATH", () => {
  const prefix = join(temp, "prefix");
  const r = installCli(prefix);
  expect(r.status, r.stderr).toBe(0);
  const bin = join(prefix, "bin");
  expect(r.stdout).toContain(`installed pisync ${packageJson.version} as ${join(bin, "pisync")}\n`);
  expect(r.stdout).toContain(`${bin} is not on your PATH: add it`);
  // By name, from a PATH that holds the prefix's bin and node only.
  const version = execFileSync("pisync", ["--version"], {
    env: { PATH: [bin, dirname(process.execPath)].join(delimiter) },
    encoding: "utf8",
  });
  expect(version).toBe(`${packageJson.version}\n`);
  // Every file of the build came along: a command split into a chunk, and `pisync mcp` (its own
  // bundle) answering an MCP client's first request.
  const installed = { PATH: [bin, dirname(process.execPath)].join(delimiter), HOME: temp };
  expect(execFileSync("pisync", ["team", "--help"], { env: installed, encoding: "utf8" })).toContain(
    "usage: pisync team",
  );
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "install-test", version: "1" } },
  };
  const served = spawnSync("pisync", ["mcp"], {
    env: { ...installed, PISYNC_ENDPOINT: "http://127.0.0.1:9", PISYNC_TOKEN: `pst_${"a".repeat(43)}` },
    input: `${JSON.stringify(initialize)}\n`,
    encoding: "utf8",
  });
  expect(served.status, served.stderr).toBe(0);
  expect(JSON.parse(served.stdout.split("\n")[0])).toMatchObject({ id: 1, result: { serverInfo: { name: "pisync" } } });
  // Installed again (an update): still one command, the same answer.
  expect(installCli(prefix).status).toBe(0);
}, 180_000);

// As root every folder is writable, so the refusal this case needs cannot happen here.
it.runIf(process.getuid?.() !== 0)(
  "falls back to ~/.local when the global prefix is not writable, without root",
  () => {
    const locked = join(temp, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    const home = join(temp, "home");
    const r = installCli(join(locked, "prefix"), { HOME: home });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`installing into ${join(home, ".local")} instead`);
    expect(execFileSync(join(home, ".local", "bin", "pisync"), ["--version"], { encoding: "utf8" })).toBe(
      `${packageJson.version}\n`,
    );
  },
  180_000,
);

it("installs from a checkout whose path has a space and non-ASCII letters", () => {
  // The script and what it reads, copied under such a folder; the bundle's build is a stand-in
  // writing a bundle that prints the version (the real build is the first case's).
  const checkout = join(temp, "my repo ü");
  mkdirSync(join(checkout, "scripts"), { recursive: true });
  mkdirSync(join(checkout, "packages", "cli"), { recursive: true });
  copyFileSync(join(repo, "scripts", "install-cli.ts"), join(checkout, "scripts", "install-cli.ts"));
  copyFileSync(join(repo, "packages", "cli", "package.json"), join(checkout, "packages", "cli", "package.json"));
  writeFileSync(
    join(checkout, "packages", "cli", "build.mjs"),
    `import { mkdirSync, writeFileSync } from "node:fs";
const dist = new URL("./dist/", import.meta.url);
mkdirSync(dist, { recursive: true });
writeFileSync(new URL("pisync.mjs", dist), ${JSON.stringify(`#!/usr/bin/env node\nconsole.log(${JSON.stringify(packageJson.version)});\n`)});
`,
  );
  symlinkSync(join(repo, "node_modules"), join(checkout, "node_modules"));
  const prefix = join(temp, "prefix ü");
  const r = spawnSync(process.execPath, ["--import", "tsx", join("scripts", "install-cli.ts")], {
    cwd: checkout,
    env: { ...process.env, npm_config_prefix: prefix },
    encoding: "utf8",
  });
  expect(r.status, r.stderr).toBe(0);
  expect(execFileSync(join(prefix, "bin", "pisync"), [], { encoding: "utf8" })).toBe(`${packageJson.version}\n`);
}, 180_000);
