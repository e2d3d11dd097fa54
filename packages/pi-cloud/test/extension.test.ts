/**
 * The pi package, loaded into pi's real runtime (createAgentSession with a resource loader),
 * each /cloud command run against `npm start`; the share link opens the branch pi was on; and
 * the extension's backups coexist with a running `pisync watch` without double uploads.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  createAgentSession,
  createEventBus,
  DefaultResourceLoader,
  SessionManager,
} from "@mariozechner/pi-coding-agent";
import { piFolderName } from "@pisync/cli";
import { assistantMessage } from "@pisync/testing";
import { completeBytes, eventually, machine, npmStartForFile } from "@pisync/testing/cli";
import { describe, expect, it } from "vitest";

const extensionPath = new URL("../dist/cloud.mjs", import.meta.url).pathname;

const server = npmStartForFile(() =>
  execFileSync(process.execPath, [new URL("../build.mjs", import.meta.url).pathname], { stdio: "ignore" }),
);

/** pi's runtime with the extension loaded, for a session manager; what /cloud reports lands in `results`. */
async function loadPi(home: string, sessionManager: SessionManager) {
  const results: Record<string, unknown>[] = [];
  const eventBus = createEventBus();
  eventBus.on("pisync:cloud", (data) => results.push(data as Record<string, unknown>));
  const loader = new DefaultResourceLoader({
    cwd: home,
    agentDir: join(home, ".pi", "agent"),
    additionalExtensionPaths: [extensionPath],
    eventBus,
  });
  await loader.reload();
  const { session } = await createAgentSession({ resourceLoader: loader, sessionManager, cwd: home });
  return { session, results };
}

describe("/cloud inside pi", () => {
  it("shares the branch pi is on, reports status, pulls a link; coexists with pisync watch", async () => {
    const m = machine(server.url, server.token);
    const saved = { ...process.env };
    Object.assign(process.env, m.env);
    try {
      const cwd = "/home/dev/pi-app";
      const sm = SessionManager.create(cwd, join(m.sessionsRoot, piFolderName(cwd)));
      const { session, results } = await loadPi(m.home, sm);

      // A watcher runs too, on the same files and state.
      const watcher = m.watch();

      // Two branches; then pi moves back to the first one (no file line records that).
      const first = sm.appendMessage({ role: "user", content: "first branch question", timestamp: 1 });
      const firstAnswer = sm.appendMessage(assistantMessage("first branch answer"));
      sm.branch(first);
      sm.appendMessage({ role: "user", content: "second branch question", timestamp: 2 });
      sm.appendMessage(assistantMessage("second branch answer"));
      sm.branch(firstAnswer);
      expect(sm.getLeafId()).toBe(firstAnswer);

      const last = () => results[results.length - 1] ?? {};
      await session.prompt("/cloud share --expires 1h");
      const url = String(last().url);
      expect(url).toMatch(/\/s\//);
      expect(last().leafId).toBe(firstAnswer);
      const context = (await (await fetch(`${url}/context`)).json()) as { messages: { content: unknown }[] };
      expect(JSON.stringify(context.messages)).toContain("first branch answer");
      expect(JSON.stringify(context.messages)).not.toContain("second branch");

      await session.prompt("/cloud share --live");
      expect(last().leafId).toBeNull();
      // Beyond the server's limit: said in days, as the flag is written.
      await session.prompt("/cloud share --expires 100d");
      expect(last().error).toBe("--expires: at most 90 days on this server, e.g. --expires 7d");

      await session.prompt("/cloud status");
      expect(last()).toMatchObject({ backedUp: true, pending: 0, generation: 1 });

      // The fork lands in the project pi is open in, and names the share without its token.
      await session.prompt(`/cloud pull ${url}`);
      const fork = String(last().path);
      expect(last().already).toBe(false);
      expect(fork.startsWith(join(m.sessionsRoot, piFolderName(m.home)))).toBe(true);
      const shareId = (/\/s\/([A-Za-z0-9_-]{22})\./.exec(url) as RegExpExecArray)[1];
      const forkHeader = readFileSync(fork, "utf8").split("\n")[0];
      expect(JSON.parse(forkHeader)).toMatchObject({ parentSession: `pisync-share:${shareId}`, cwd: m.home });
      expect(forkHeader).not.toContain(url.split("/s/")[1]);
      // Pulled again with nothing new: the same fork, said to be already here.
      await session.prompt(`/cloud pull ${url}`);
      expect(last()).toMatchObject({ path: fork, already: true });

      // More writes while both the extension and the watcher send: one generation, exact bytes.
      for (let i = 0; i < 10; i++) {
        sm.appendMessage({ role: "user", content: `more ${i}`, timestamp: 10 + i });
        sm.appendMessage(assistantMessage(`reply ${i}`));
        await session.prompt("/cloud status");
      }
      const file = sm.getSessionFile() as string;
      const failure = await eventually(async () => {
        const r = await fetch(`${server.url}/v1/sessions/${sm.getSessionId()}/raw`, {
          headers: { Authorization: `Bearer ${server.token}` },
        });
        const cloud = Buffer.from(await r.arrayBuffer());
        return cloud.equals(completeBytes(file))
          ? undefined
          : `cloud ${cloud.length}, local ${completeBytes(file).length}`;
      });
      expect(failure).toBeUndefined();
      const meta = (await (
        await fetch(`${server.url}/v1/sessions/${sm.getSessionId()}`, {
          headers: { Authorization: `Bearer ${server.token}` },
        })
      ).json()) as { generation: number };
      expect(meta.generation).toBe(1);
      watcher.child.kill("SIGTERM");
      expect(readFileSync(file).length).toBeGreaterThan(0);
    } finally {
      process.env = saved;
      await m.cleanup();
    }
  }, 120_000);

  it("says what to do when not logged in, or when the token is malformed", async () => {
    const m = machine(server.url, server.token);
    const saved = { ...process.env };
    Object.assign(process.env, m.env);
    delete process.env.PISYNC_ENDPOINT;
    delete process.env.PISYNC_TOKEN;
    try {
      const { session, results } = await loadPi(m.home, SessionManager.inMemory());
      await session.prompt("/cloud status");
      expect(results.map((r) => r.error).join()).toContain("pisync login");
      // A malformed token in the environment is named as such.
      process.env.PISYNC_TOKEN = "pst_short";
      await session.prompt("/cloud status");
      expect(String(results[results.length - 1]?.error)).toContain("PISYNC_TOKEN is malformed");
    } finally {
      process.env = saved;
      await m.cleanup();
    }
  }, 60_000);
});
