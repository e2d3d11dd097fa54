/**
 * `pisync login --endpoint URL` without a token, end to end: the bundled CLI against `npm start`
 * prints a code and hands the approval page to $BROWSER; a real Chromium, signed in to the
 * library, approves it on `/device`; the CLI receives a token named after this machine's host
 * name, saves it, and it works. Denied in the browser, the CLI exits 3 and saves nothing.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { buildCli, cliPath, type Server, startServer } from "@pisync/testing/cli";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const docs = new URL("../../../docs/", import.meta.url).pathname;
let server: Server;
let dataDir: string;
let browser: Browser;
const homes: string[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "pisync-device-login-"));
  server = await startServer(dataDir);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
}, 120_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await browser?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** `pisync login --endpoint URL` on a fresh machine whose $BROWSER writes the URL it is given to a file. */
function loginFromTerminal() {
  const home = mkdtempSync(join(tmpdir(), "pisync-device-home-"));
  homes.push(home);
  const opened = join(home, "opened-url");
  const opener = join(home, "browser.sh");
  writeFileSync(opener, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
  chmodSync(opener, 0o755);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    BROWSER: opener,
  };
  delete env.PISYNC_ENDPOINT;
  delete env.PISYNC_TOKEN;
  // Nothing piped in (stdin is /dev/null): the browser flow, not a token read from stdin.
  const child = spawn(process.execPath, [cliPath, "login", "--endpoint", server.url], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const done = new Promise<number | null>((resolve) => child.once("close", resolve));
  return {
    home,
    env,
    config: join(home, ".config", "pisync", "config.json"),
    stderr: () => stderr,
    done,
    /** The page the CLI asked the browser to open. */
    url: async () => {
      const deadline = Date.now() + 30_000;
      while (!existsSync(opened) || readFileSync(opened, "utf8") === "") {
        if (Date.now() > deadline) throw new Error(`the CLI opened no page:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return readFileSync(opened, "utf8");
    },
  };
}

/** A browser page signed in to the library as the server's local user (through a one-time link). */
async function signedInPage(): Promise<Page> {
  const res = await fetch(`${server.url}/v1/login-links`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: "{}",
  });
  const { url } = (await res.json()) as { url: string };
  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  return page;
}

describe("pisync login from the browser", () => {
  it("approved on /device in Chromium, the CLI gets a working token named after this machine", async () => {
    const cli = loginFromTerminal();
    const url = await cli.url();
    expect(url).toMatch(new RegExp(`^${server.url}/device\\?code=[A-Z]{4}-[A-Z]{4}$`));
    const code = new URL(url).searchParams.get("code") as string;
    expect(cli.stderr()).toContain(`First copy your one-time code: ${code}`);
    const page = await signedInPage();
    await page.goto(url);
    await expect(page.locator(".device-request .user-code").textContent()).resolves.toBe(code);
    await expect(page.locator(".device-request .machine-name").textContent()).resolves.toBe(hostname());
    await page.setViewportSize({ width: 900, height: 560 });
    await page.screenshot({ path: join(docs, "library-device.png"), fullPage: false });
    await page.getByRole("button", { name: "Approve" }).click();
    await page.locator("p.done").waitFor();
    expect(await page.locator("p.done").textContent()).toContain("Approved");

    expect(await cli.done, cli.stderr()).toBe(0);
    expect(cli.stderr()).toContain(`logged in to ${server.url} as "${hostname()}"`);
    const saved = JSON.parse(readFileSync(cli.config, "utf8")) as { endpoint: string; token: string };
    expect(saved.endpoint).toBe(server.url);
    // It works, and it is a token of the user who approved, named after the machine.
    const listed = await fetch(`${server.url}/v1/tokens`, { headers: { Authorization: `Bearer ${saved.token}` } });
    expect(listed.status).toBe(200);
    const { tokens } = (await listed.json()) as { tokens: { name: string; current: boolean }[] };
    expect(tokens.find((t) => t.current)?.name).toBe(hostname());
    expect(tokens.map((t) => t.name)).toContain("created by npm start");
    // The login is the saved one: `pisync ls` works without any token in the environment.
    const ls = spawn(process.execPath, [cliPath, "ls"], { env: cli.env, stdio: ["ignore", "pipe", "pipe"] });
    expect(await new Promise((resolve) => ls.once("close", resolve))).toBe(0);
    // And `pisync device rename` renames it.
    const rename = spawn(process.execPath, [cliPath, "device", "rename", "desk upstairs"], {
      env: cli.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(await new Promise((resolve) => rename.once("close", resolve))).toBe(0);
    const after = (await (
      await fetch(`${server.url}/v1/tokens`, { headers: { Authorization: `Bearer ${saved.token}` } })
    ).json()) as { tokens: { name: string; current: boolean }[] };
    expect(after.tokens.find((t) => t.current)?.name).toBe("desk upstairs");
  }, 60_000);

  it("denied in the browser, the CLI says so, exits 3 and saves nothing", async () => {
    const cli = loginFromTerminal();
    const page = await signedInPage();
    await page.goto(`${server.url}/device`);
    // Typed by hand, in lower case.
    await page.fill("input[name=code]", (new URL(await cli.url()).searchParams.get("code") as string).toLowerCase());
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("button", { name: "Deny" }).click();
    await page.locator("p.done").waitFor();
    expect(await cli.done).toBe(3);
    expect(cli.stderr()).toContain("denied");
    expect(existsSync(cli.config)).toBe(false);
  }, 60_000);
});
