// What the tests need from the machine, found or installed before any test runs (`npm test`
// runs this first; `scripts/setup-machine.sh`, which CI runs before `npm ci`, runs it too).
//
//   - Java 17 or later: DynamoDB Local, the server the storage tests speak to, is a Java jar.
//   - Chromium: the browser tests drive it with playwright-core, at $CHROMIUM_PATH or
//     /usr/bin/chromium (never a downloaded browser).
//
// Where one is missing and this machine can install it (Debian or Ubuntu, as root, apt-get on
// the PATH), it is installed, saying what and why. Elsewhere the script stops with one line
// naming what is missing and the command that installs it. Plain Node, no dependency: it runs
// before `npm ci`.
import { spawnSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

const JAVA_PACKAGE = "openjdk-17-jre-headless";
const CHROMIUM_PACKAGE = "chromium";
const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/** The path of an executable file, or undefined. */
function executable(path) {
  try {
    if (!statSync(path).isFile()) return undefined;
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}

/** `name` on the PATH of `env`, as a shell would find it. */
function onPath(name, env) {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    const found = dir && executable(join(dir, name));
    if (found) return found;
  }
  return undefined;
}

/** Java's major version from `java -version` (`"17.0.15"` → 17, `"1.8.0_392"` → 8). */
function javaMajor(java, env) {
  const run = spawnSync(java, ["-version"], { env, encoding: "utf8", timeout: 30_000 });
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${run.stderr}${run.stdout}`);
  if (!match) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
}

/** What is missing, each with why and the Debian package that brings it (when apt-get can). */
function missing(env) {
  const gaps = [];
  const java = onPath("java", env);
  const major = java ? javaMajor(java, env) : undefined;
  if (!java) gaps.push({ what: "Java 17 (java is not on the PATH)", why: "DynamoDB Local", pkg: JAVA_PACKAGE });
  else if (!(major >= 17)) {
    gaps.push({
      what: `Java 17 (${java} is Java ${major ?? "of an unknown version"})`,
      why: "DynamoDB Local",
      pkg: JAVA_PACKAGE,
    });
  }
  const chromium = env.CHROMIUM_PATH || DEFAULT_CHROMIUM;
  if (!executable(chromium)) {
    // Installing puts Chromium at /usr/bin/chromium: it cannot fix a CHROMIUM_PATH that names another place.
    const named = env.CHROMIUM_PATH ? `CHROMIUM_PATH=${env.CHROMIUM_PATH} is not an executable file` : `no ${chromium}`;
    gaps.push({
      what: `Chromium (${named})`,
      why: "the browser tests",
      pkg: env.CHROMIUM_PATH ? undefined : CHROMIUM_PACKAGE,
    });
  }
  return gaps;
}

/** Whether this machine installs packages with apt-get without asking anyone. */
function canInstall(env) {
  return process.platform === "linux" && process.getuid?.() === 0 && onPath("apt-get", env) !== undefined;
}

/** The one line that ends the setup: what is missing, and the command that installs it. */
function failure(gaps, env) {
  const packages = gaps.map((gap) => gap.pkg).filter(Boolean);
  const how =
    process.platform === "darwin"
      ? "install them (brew install openjdk@17; brew install --cask chromium) and set CHROMIUM_PATH to Chromium's executable"
      : packages.length === gaps.length
        ? `install ${packages.length === 1 ? "it" : "them"}: sudo apt-get install -y ${packages.join(" ")}`
        : `point CHROMIUM_PATH at Chromium's executable (or unset it)${packages.length ? ` and run: sudo apt-get install -y ${packages.join(" ")}` : ""}`;
  const list = gaps.map((gap) => `${gap.what}, for ${gap.why}`).join("; ");
  return `npm test: missing ${list}: ${how}${onPath("apt-get", env) && process.getuid?.() !== 0 ? " (or run npm test as root, which installs them)" : ""}`;
}

/** Finds or installs what the tests need; returns the exit code. */
function setup(env) {
  const gaps = missing(env);
  const installable = gaps.filter((gap) => gap.pkg);
  if (installable.length > 0 && canInstall(env)) {
    const packages = installable.map((gap) => gap.pkg);
    const said = installable.map((gap) => `${gap.pkg} (${gap.what.split(" (")[0]}, for ${gap.why})`);
    console.log(`npm test: installing ${said.join(" and ")} with apt-get`);
    const quiet = { stdio: ["ignore", "ignore", "inherit"], env: { ...env, DEBIAN_FRONTEND: "noninteractive" } };
    if (spawnSync("apt-get", ["update", "-qq"], quiet).status === 0) {
      spawnSync("apt-get", ["install", "-y", "-qq", ...packages], quiet);
    }
    // apt-get's own errors are above; what is still missing is said below, in one line.
    return report(missing(env), env);
  }
  return report(gaps, env);
}

/** 0 when nothing is missing, else the one line and 1. */
function report(gaps, env) {
  if (gaps.length === 0) return 0;
  console.error(failure(gaps, env));
  return 1;
}

process.exitCode = setup(process.env);
