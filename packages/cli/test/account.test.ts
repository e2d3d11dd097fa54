/**
 * Signing a machine in and out, against `npm start`: the token read from standard input (with
 * `--token -` or piped), never needed on the command line; `whoami`; `logout` removing the saved
 * login, and `--revoke` revoking the token on the server too.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cliPath, machine, npmStartForFile } from "@pisync/testing/cli";
import { describe, expect, it } from "vitest";

const server = npmStartForFile();

/** Runs pisync with `input` on its standard input (a pipe, not a terminal), without the env login. */
function runWithInput(m: ReturnType<typeof machine>, args: string[], input: string) {
  const r = spawnSync(process.execPath, [cliPath, ...args], {
    env: { ...m.env, PISYNC_ENDPOINT: "", PISYNC_TOKEN: "" },
    input,
    encoding: "utf8",
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("login, whoami, logout", () => {
  it("takes the token from standard input, says who this machine is, and logs out (revoking on the server)", async () => {
    const m = machine(server.url, server.token);
    const noEnv = { PISYNC_ENDPOINT: "", PISYNC_TOKEN: "" };
    const config = join(m.home, ".config", "pisync", "config.json");
    try {
      // A fresh token of this account, for this machine.
      const made = await fetch(`${server.url}/v1/tokens`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ name: "laptop" }),
      });
      const { token, id } = (await made.json()) as { token: string; id: string };

      const dash = runWithInput(m, ["login", "--endpoint", server.url, "--token", "-"], `${token}\n`);
      expect(dash.code, dash.stderr).toBe(0);
      expect(JSON.parse(readFileSync(config, "utf8"))).toEqual({ endpoint: server.url, token });
      const piped = runWithInput(m, ["login", "--endpoint", server.url], token);
      expect(piped.code, piped.stderr).toBe(0);
      expect(runWithInput(m, ["login", "--endpoint", server.url, "--token", "-"], "").stderr).toContain(
        "standard input held no token",
      );
      expect(runWithInput(m, ["login", "--endpoint", server.url], "pst_short").code).toBe(2);

      const who = m.run(["whoami"], noEnv);
      expect(who.code, who.stderr).toBe(0);
      expect(who.stdout).toContain("account   local");
      expect(who.stdout).toContain(`endpoint  ${server.url}`);
      expect(who.stdout).toContain(`device    laptop (token ${id})`);
      expect(who.stdout).toMatch(/server {4}srv_[A-Za-z0-9_-]{16}/);
      expect(who.stdout).not.toContain(token);

      const out = m.run(["logout"], noEnv);
      expect(out.code, out.stderr).toBe(0);
      expect(existsSync(config)).toBe(false);
      expect(m.run(["whoami"], noEnv).code).toBe(3);
      // Still accepted by the server: logout alone only forgets it here.
      expect((await fetch(`${server.url}/v1/whoami`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(
        200,
      );

      expect(runWithInput(m, ["login", "--endpoint", server.url], token).code).toBe(0);
      const revoked = m.run(["logout", "--revoke"], noEnv);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(revoked.stderr).toContain("revoked the token of laptop");
      expect(existsSync(config)).toBe(false);
      expect((await fetch(`${server.url}/v1/whoami`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(
        401,
      );
      // The server's own token is untouched.
      expect(m.run(["whoami"]).code).toBe(0);
    } finally {
      await m.cleanup();
    }
  }, 90_000);
});
