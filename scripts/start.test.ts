/** `npm start` as a newcomer runs it: a real server on the embedded store, with a first token. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { freePort, stopProcessGroup } from "./test-servers/servers.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-start-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `npm start`; resolves with its URL and the token it printed. */
async function start(port: number) {
  const child = spawn("npm", ["start", "--", "--port", String(port), "--data", dir], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not print a token:\n${output}`)), 60_000);
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (/pst_\S{43}\n/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("exit", (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  const token = (/pst_\S{43}/.exec(output) as RegExpExecArray)[0];
  const stop = async () => {
    expect(await stopProcessGroup(child.pid as number), "npm start stops on SIGTERM").toBe(true);
  };
  return { url: `http://127.0.0.1:${port}`, token, output, stop };
}

it("serves the API with a ready token, and keeps the data across restarts", async () => {
  const port = await freePort();
  const first = await start(port);
  expect(first.output).toContain("first start");
  expect(statSync(join(dir, "local-token")).mode & 0o777).toBe(0o600);
  const header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n';
  const r = await fetch(`${first.url}/v1/sessions/s`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${first.token}`, "Upload-Offset": "0" },
    body: header,
  });
  expect(r.status).toBe(200);
  await first.stop();

  const second = await start(await freePort());
  expect(second.token).toBe(first.token);
  const raw = await fetch(`${second.url}/v1/sessions/s/raw`, { headers: { Authorization: `Bearer ${second.token}` } });
  expect(await raw.text()).toBe(header);
  await second.stop();
}, 120_000);
