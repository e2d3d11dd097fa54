/**
 * `npm start`'s public address: on 127.0.0.1 without one it says, once, that its links open only
 * on this machine; with `--public-url` (or `PISYNC_PUBLIC_URL`) share links, sign-in links, the
 * device sign-in page and share previews are made with that address; a malformed one is refused.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, stopProcessGroup } from "@pisync/testing/servers";
import { afterAll, expect, it } from "vitest";

const home = mkdtempSync(join(tmpdir(), "pisync-public-url-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const PUBLIC = "https://pisync.example.com";

function spawnStart(args: string[], env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(join(home, "data-"));
  const child = spawn("npm", ["start", "--", "--data", dir, "--no-watch", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, PISYNC_PUBLIC_URL: "", ...env },
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  return { child, output: () => output };
}

/** `npm start` until it printed its token; its address, token, output and stop. */
async function start(args: string[], env: NodeJS.ProcessEnv = {}) {
  const port = await freePort();
  const started = spawnStart(["--port", String(port), ...args], env);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not get ready:\n${started.output()}`)), 60_000);
    const check = () => {
      if (/pst_\S{43}\n/.test(started.output())) {
        clearTimeout(timer);
        resolve();
      }
    };
    started.child.stdout.on("data", check);
    started.child.stderr.on("data", check);
    started.child.on("exit", (code) => reject(new Error(`npm start exited (${code}):\n${started.output()}`)));
  });
  const token = (/pst_\S{43}/.exec(started.output()) as RegExpExecArray)[0];
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    output: started.output,
    stop: async () => expect(await stopProcessGroup(started.child.pid as number, 30_000)).toBe(true),
  };
}

async function links(server: { url: string; token: string }) {
  const auth = { Authorization: `Bearer ${server.token}` };
  const header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n';
  const put = await fetch(`${server.url}/v1/sessions/s`, {
    method: "PATCH",
    headers: { ...auth, "Upload-Offset": "0" },
    body: header,
  });
  expect(put.status).toBe(200);
  const json = { ...auth, "Content-Type": "application/json" };
  const share = (await (
    await fetch(`${server.url}/v1/sessions/s/shares`, { method: "POST", headers: json, body: "{}" })
  ).json()) as { url: string };
  const listed = (await (await fetch(`${server.url}/v1/shares`, { headers: auth })).json()) as {
    shares: { url: string }[];
  };
  const login = (await (
    await fetch(`${server.url}/v1/login-links`, { method: "POST", headers: json, body: "{}" })
  ).json()) as { url: string };
  const device = (await (
    await fetch(`${server.url}/v1/device/code`, { method: "POST", headers: json, body: "{}" })
  ).json()) as { verification_uri: string };
  // The share page, read here: its preview tags name absolute URLs.
  const local = share.url.replace(/^https?:\/\/[^/]+/, server.url);
  const page = await (await fetch(local, { headers: { Accept: "text/html" } })).text();
  const preview = /<meta property="og:url" content="([^"]+)"/.exec(page)?.[1];
  return {
    share: share.url,
    listed: listed.shares[0]?.url,
    login: login.url,
    device: device.verification_uri,
    preview,
  };
}

it("on 127.0.0.1 without a public URL, says once that its links open only on this machine", async () => {
  const server = await start([]);
  try {
    const notes = server.output().match(/open only on this machine/g) ?? [];
    expect(notes).toHaveLength(1);
    expect(server.output()).toContain("--public-url");
    const made = await links(server);
    expect(made.share.startsWith(`${server.url}/s/`)).toBe(true);
    expect(made.device).toBe(`${server.url}/device`);
  } finally {
    await server.stop();
  }
}, 90_000);

it("--public-url makes share links, sign-in links, the device page and previews with that address", async () => {
  const server = await start(["--public-url", `${PUBLIC}/`]);
  try {
    expect(server.output()).not.toContain("open only on this machine");
    expect(server.output()).toContain(`use ${PUBLIC}`);
    const made = await links(server);
    expect(made.share).toMatch(new RegExp(`^${PUBLIC}/s/`));
    expect(made.listed).toBe(made.share);
    expect(made.login).toMatch(new RegExp(`^${PUBLIC}/login/psl_`));
    expect(made.device).toBe(`${PUBLIC}/device`);
    expect(made.preview).toBe(made.share);
  } finally {
    await server.stop();
  }
}, 90_000);

it("PISYNC_PUBLIC_URL does the same; a malformed address is refused before anything starts", async () => {
  const server = await start([], { PISYNC_PUBLIC_URL: "https://sync.example.org:8443" });
  try {
    expect((await links(server)).login).toMatch(/^https:\/\/sync\.example\.org:8443\/login\/psl_/);
  } finally {
    await server.stop();
  }
  for (const [args, env, said] of [
    [["--public-url", "ftp://x"], {}, "--public-url: the public URL must start with https://"],
    [["--public-url", "https://x.example/pisync"], {}, "is an origin only"],
    [[], { PISYNC_PUBLIC_URL: "not a url" }, "PISYNC_PUBLIC_URL: the public URL"],
  ] as const) {
    const run = spawnStart([...args], env);
    const code = await new Promise((resolve) => run.child.on("exit", resolve));
    expect(code).toBe(2);
    expect(run.output()).toContain(said);
  }
}, 90_000);
