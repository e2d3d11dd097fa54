/** `pisync open` against `npm start`: a one-time link to a session, a search or the list; $BROWSER; usage errors. */
import { spawnSync } from "node:child_process";
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCli, cliPath, machine, type Server, startServer } from "@pisync/testing/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openerFor } from "../src/commands/open.js";

let server: Server;
let dataDir: string;
let m: ReturnType<typeof machine>;

beforeAll(async () => {
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "pisync-open-cli-"));
  server = await startServer(dataDir);
  m = machine(server.url, server.token);
  const header = { type: "session", version: 3, id: "s-mine", timestamp: "2026-02-01T00:00:00.000Z", cwd: "/w" };
  const r = await fetch(`${server.url}/v1/sessions/s-mine`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${server.token}`, "Upload-Offset": "0" },
    body: `${JSON.stringify(header)}\n`,
  });
  expect(r.ok).toBe(true);
}, 120_000);

afterAll(async () => {
  await m?.cleanup();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Follows a printed link once: where it redirects and the cookie it sets. */
async function follow(url: string) {
  const res = await fetch(url, { redirect: "manual" });
  return { status: res.status, location: res.headers.get("Location"), cookie: res.headers.get("Set-Cookie") ?? "" };
}

describe("pisync open", () => {
  it("--print prints a one-time link to the library that signs a browser in once", async () => {
    const r = m.run(["open", "--print"]);
    expect(r.code).toBe(0);
    const url = r.stdout.trim();
    expect(url).toMatch(new RegExp(`^${server.url}/login/psl_[A-Za-z0-9_-]{43}$`));
    const first = await follow(url);
    expect(first).toMatchObject({ status: 303, location: "/" });
    expect(first.cookie).toMatch(/^pisync_session=pss_.*HttpOnly.*SameSite=Strict/);
    expect((await follow(url)).status).toBe(404);
  });

  it("lands on a session the user has, else on a search for the words", async () => {
    const session = m.run(["open", "s-mine", "--print"]);
    expect(session.code).toBe(0);
    expect((await follow(session.stdout.trim())).location).toBe("/sessions/s-mine");
    const search = m.run(["open", 'retry "S3 bucket"', "--print"]);
    expect((await follow(search.stdout.trim())).location).toBe("/?q=retry%20%22S3%20bucket%22");
    const unknown = m.run(["open", "s-not-mine", "--print"]);
    expect((await follow(unknown.stdout.trim())).location).toBe("/?q=s-not-mine");
  });

  it("opens the link with $BROWSER (the URL as one argument), or prints it when there is no browser", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pisync-browser-"));
    try {
      const opened = join(dir, "opened");
      const script = join(dir, "browser.sh");
      writeFileSync(script, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
      chmodSync(script, 0o755);
      const r = m.run(["open", "s-mine"], { BROWSER: script });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("opened /sessions/s-mine");
      const until = Date.now() + 10_000;
      while (!existsSync(opened) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      const url = readFileSync(opened, "utf8");
      expect((await follow(url)).location).toBe("/sessions/s-mine");
      const none = m.run(["open"], { BROWSER: join(dir, "no-such-browser") });
      expect(none.code).toBe(0);
      expect(none.stderr).toContain("could not open a browser with");
      expect(none.stdout.trim()).toMatch(/\/login\/psl_/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prints the link when xdg-open is there but fails (no browser installed), exit 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pisync-xdg-"));
    try {
      // xdg-open's own code when no browser or handler is found.
      writeFileSync(join(dir, "xdg-open"), "#!/bin/sh\nexit 3\n");
      chmodSync(join(dir, "xdg-open"), 0o755);
      const r = m.run(["open", "s-mine"], { BROWSER: "", PATH: dir });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain("could not open a browser with xdg-open");
      expect(r.stderr).not.toContain("opened");
      const url = r.stdout.trim();
      expect(url).toMatch(/\/login\/psl_[A-Za-z0-9_-]{43}$/);
      expect((await follow(url)).location).toBe("/sessions/s-mine");
      // No xdg-open at all: printed the same way.
      const missing = m.run(["open"], { BROWSER: "", PATH: join(dir, "nothing-here") });
      expect(missing.code).toBe(0);
      expect(missing.stdout.trim()).toMatch(/\/login\/psl_/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prints the link when the opener cannot confirm it opened the page (still running after 3 s)", () => {
    const dir = mkdtempSync(join(tmpdir(), "pisync-slow-browser-"));
    try {
      const browser = join(dir, "browser.sh");
      writeFileSync(browser, "#!/bin/sh\nexec sleep 20\n");
      chmodSync(browser, 0o755);
      const started = Date.now();
      const r = m.run(["open"], { BROWSER: browser });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`asked ${browser} to open /; if no browser shows it`);
      expect(r.stdout.trim()).toMatch(/\/login\/psl_/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("exits non-zero only when it could neither open the link nor print it", () => {
    const full = openSync("/dev/full", "w"); // every write fails: the link cannot be printed
    try {
      const run = (env: NodeJS.ProcessEnv) =>
        spawnSync(process.execPath, [cliPath, "open"], {
          env: { ...m.env, ...env },
          encoding: "utf8",
          stdio: ["ignore", full, "pipe"],
        });
      const lost = run({ BROWSER: "/no/such/browser" });
      expect(lost.stderr).toContain("could not open a browser with /no/such/browser");
      expect(lost.status).toBe(1);
      // Opened: nothing had to be printed, so a stdout that cannot be written changes nothing.
      const opened = run({ BROWSER: "true" });
      expect(opened.stderr).toContain("opened / in your browser");
      expect(opened.status).toBe(0);
    } finally {
      closeSync(full);
    }
  });

  it("--help shows examples; bad arguments exit 2; no login exits 3", () => {
    const help = m.run(["open", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("examples:");
    expect(help.stdout).toContain("pisync open --print");
    for (const bad of [
      ["open", "a", "b"],
      ["open", "--nope"],
      ["open", ""],
      ["open", "--print=yes"],
    ]) {
      const r = m.run(bad);
      expect(r.code, bad.join(" ")).toBe(2);
      expect(r.stderr).toContain("usage: pisync open");
    }
    expect(m.run(["open", "--print"], { PISYNC_TOKEN: "", PISYNC_ENDPOINT: "" }).code).toBe(3);
  });
});

describe("the opener", () => {
  it("is $BROWSER (first of a list, %s placed), else the platform's", () => {
    expect(openerFor({ BROWSER: "firefox --new-tab:chromium" }, "linux")).toEqual({
      command: "firefox",
      args: ["--new-tab", "%s"],
    });
    expect(openerFor({ BROWSER: "w3m %s" }, "linux")).toEqual({ command: "w3m", args: ["%s"] });
    expect(openerFor({}, "linux").command).toBe("xdg-open");
    expect(openerFor({}, "darwin").command).toBe("open");
    expect(openerFor({}, "win32")).toEqual({ command: "cmd", args: ["/c", "start", '""', "%s"] });
  });
});
