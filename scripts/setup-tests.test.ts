/**
 * `npm test` on a machine without Java or Chromium: the setup installs them where it can, else
 * stops with one line naming what is missing and the command that installs it, never a stack
 * trace. Java and Chromium are hidden (a PATH without java, an empty CHROMIUM_PATH folder),
 * never uninstalled; apt-get is a stand-in that records what it was asked.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { ServerStartError, startDynamoDbLocal, startS3rver } from "@pisync/testing/servers";
import { afterEach, describe, expect, it } from "vitest";

const setupScript = new URL("./setup-tests.mjs", import.meta.url).pathname;
const repo = new URL("..", import.meta.url).pathname;
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** An empty folder that stands for a PATH (or a CHROMIUM_PATH's folder) with nothing useful in it. */
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "pisync-setup-"));
  folders.push(dir);
  return dir;
}

function script(path: string, text: string): string {
  writeFileSync(path, `#!/bin/sh\n${text}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Runs the setup step with only `env` (no inherited PATH). */
function runSetup(env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, [setupScript], { env, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The one-line rule: one line on stderr, no stack frame, no Node error dump. */
function expectOneLine(stderr: string) {
  expect(stderr.trimEnd().split("\n"), stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at |Error:|node:internal/);
}

const isRoot = process.getuid?.() === 0;

describe("the test setup", () => {
  it("with Java and Chromium hidden and nothing to install them with: one line naming both and the command", () => {
    const empty = folder();
    const r = runSetup({ PATH: empty, CHROMIUM_PATH: join(folder(), "chromium") });
    expect(r.code).toBe(1);
    expectOneLine(r.stderr);
    expect(r.stderr).toContain("Java 17 (java is not on the PATH), for DynamoDB Local");
    expect(r.stderr).toContain("Chromium (CHROMIUM_PATH=");
    expect(r.stderr).toContain("sudo apt-get install -y openjdk-17-jre-headless");
  });

  it("a Java older than 17 is named with its version", () => {
    const bin = folder();
    script(join(bin, "java"), `echo 'openjdk version "1.8.0_392"' >&2`);
    const chromium = script(join(bin, "chromium"), "exit 0");
    const r = runSetup({ PATH: bin, CHROMIUM_PATH: chromium });
    expect(r.code).toBe(1);
    expectOneLine(r.stderr);
    expect(r.stderr).toContain(`Java 17 (${join(bin, "java")} is Java 8)`);
  });

  it("finds Java 17 and Chromium and says nothing", () => {
    const bin = folder();
    script(join(bin, "java"), `echo 'openjdk version "17.0.15" 2025-04-15' >&2`);
    const r = runSetup({ PATH: bin, CHROMIUM_PATH: script(join(bin, "chromium"), "exit 0") });
    expect(r).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  // Installing needs root (apt-get as anyone else asks for a password): as another user this
  // branch cannot run, and the one-line refusal above is what such a machine gets.
  it.runIf(isRoot)("as root with apt-get: installs what is missing, saying what and why, then passes", () => {
    const bin = folder();
    const log = join(bin, "apt-get.log");
    // The stand-in "installs" Java by putting a java on the PATH.
    script(
      join(bin, "apt-get"),
      `echo "$@" >> '${log}'\nif [ "$1" = install ]; then printf '#!/bin/sh\\necho "openjdk version \\\\"17.0.9\\\\"" >&2\\n' > '${join(bin, "java")}'; /bin/chmod 755 '${join(bin, "java")}'; fi`,
    );
    const r = runSetup({ PATH: bin, CHROMIUM_PATH: script(join(bin, "chromium"), "exit 0") });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("npm test: installing openjdk-17-jre-headless (Java 17, for DynamoDB Local) with apt-get\n");
    expect(readFileSync(log, "utf8")).toBe("update -qq\ninstall -y -qq openjdk-17-jre-headless\n");
  });

  it.runIf(isRoot)("as root, when apt-get fails: its own errors, then the one line", () => {
    const bin = folder();
    script(join(bin, "apt-get"), `echo "E: Unable to locate package" >&2; exit 100`);
    const r = runSetup({ PATH: bin, CHROMIUM_PATH: script(join(bin, "chromium"), "exit 0") });
    expect(r.code).toBe(1);
    const [aptSaid, ...ours] = r.stderr.trimEnd().split("\n");
    expect(aptSaid).toBe("E: Unable to locate package");
    expectOneLine(ours.join("\n"));
    expect(ours[0]).toContain("missing Java 17");
  });

  it("`npm test` runs it before any test: with java hidden it stops on that line, no stack trace", () => {
    // A PATH holding node and sh alone (npm runs its scripts with `sh`, and the step as `node`).
    const bin = folder();
    symlinkSync(process.execPath, join(bin, "node"));
    symlinkSync("/bin/sh", join(bin, "sh"));
    const npmCli = process.env.npm_execpath ?? realpathSync(onPath("npm"));
    const r = spawnSync(process.execPath, [npmCli, "test", "--", "--no-such-run"], {
      cwd: repo,
      env: { PATH: bin, HOME: process.env.HOME, CHROMIUM_PATH: join(folder(), "chromium") },
      encoding: "utf8",
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/^npm test: missing Java 17 .*apt-get install -y openjdk-17-jre-headless.*$/m);
    expect(r.stderr).not.toMatch(/\n\s+at |node:internal/);
    expect(r.stdout).not.toContain("RUN "); // vitest never started
  });
});

function onPath(name: string): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    try {
      return realpathSync(join(dir, name));
    } catch {}
  }
  throw new Error(`${name} is not on the PATH`);
}

describe("the test servers", () => {
  it("DynamoDB Local without java: one line saying java is missing and how to install it", async () => {
    const saved = process.env.PATH;
    process.env.PATH = folder();
    try {
      const error = await startDynamoDbLocal().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ServerStartError);
      const { message, stack } = error as ServerStartError;
      expect(message).toBe(
        "DynamoDB Local could not start: java is not on the PATH (DynamoDB Local needs Java 17: npm test installs it on Debian or Ubuntu as root; else: sudo apt-get install -y openjdk-17-jre-headless)",
      );
      expect(stack).toBe(message);
    } finally {
      process.env.PATH = saved;
    }
  });

  it("s3rver on a port already taken: one line with its own reason, no stack trace", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as { port: number };
    try {
      const error = await startS3rver(["b"], { port }).then(
        (running) => running.stop(),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ServerStartError);
      const { message, stack } = error as ServerStartError;
      expect(message).toMatch(/^s3rver exited at start with code 1: .*EADDRINUSE.*127\.0\.0\.1:\d+$/);
      expect(stack).toBe(message);
    } finally {
      taken.close();
    }
  });

  it("vitest run directly with java hidden: the start failure's one line is all it says, not 'No test files found'", () => {
    // Past `npm test`'s setup step (`npx vitest run FILE`): the servers' global setup fails.
    const bin = folder();
    symlinkSync(process.execPath, join(bin, "node"));
    const vitest = join(repo, "node_modules", "vitest", "vitest.mjs");
    const r = spawnSync(process.execPath, [vitest, "run", "scripts/docs-links.test.ts"], {
      cwd: repo,
      env: { PATH: bin, HOME: process.env.HOME, NO_COLOR: "1" },
      encoding: "utf8",
    });
    expect(r.status).toBe(1);
    const said = `${r.stdout}${r.stderr}`;
    expect(said).toContain("DynamoDB Local could not start: java is not on the PATH (DynamoDB Local needs Java 17");
    expect(said).not.toContain("No test files found");
    expect(said).not.toMatch(/\n\s+at |node:internal|Unhandled Error/);
    expectOneLine(r.stderr);
  });
});
