/**
 * oh-my-pi's places, end to end (files written by omp 18's own SessionManager under Bun): every
 * profile's sessions are followed, profiles made while `watch` runs too; `status` names the
 * root a file came from, collab replicas as such; `pull` files an omp session where omp looks.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cloud, eventually, machine, npmStartForFile } from "@pisync/testing/cli";
import { ompWrite } from "@pisync/testing/omp";
import { describe, expect, it } from "vitest";

type Machine = ReturnType<typeof machine>;

const sessionIdOf = (file: string) => (JSON.parse(readFileSync(file, "utf8").split("\n")[1]) as { id: string }).id;

function write(m: Machine, sessionDir: string, text: string, cwd?: string): string {
  mkdirSync(sessionDir, { recursive: true });
  return ompWrite({
    home: m.home,
    sessionDir,
    cwd,
    ops: [
      { kind: "user", text },
      { kind: "assistant", text: "ok" },
    ],
  });
}

describe("omp's roots and pull, npm start (files + SQLite)", () => {
  const server = npmStartForFile();

  it("follows every profile (one made while watch runs too); status names each file's root; collab files are replicas", async () => {
    const m = machine(server.url, server.token);
    try {
      const omp = join(m.home, ".omp");
      const work = write(m, join(omp, "profiles", "work", "agent", "sessions", "-proj"), "in the work profile");
      const main = write(m, join(omp, "agent", "sessions", "-proj"), "in omp's own root");
      const replica = write(m, join(omp, "collab"), "a guest's copy");
      const watcher = m.watch();
      const inCloud = (file: string) => async () =>
        (await cloud(server).bytes(sessionIdOf(file)))?.equals(readFileSync(file))
          ? undefined
          : `${file} not in the cloud`;
      for (const file of [work, main, replica])
        expect(await eventually(inCloud(file), 30_000), watcher.log()).toBeUndefined();
      // A profile made while watch runs.
      const late = write(m, join(omp, "profiles", "late", "agent", "sessions", "-p"), "a profile made later");
      expect(await eventually(inCloud(late), 30_000), watcher.log()).toBeUndefined();

      const status = JSON.parse(m.run(["status", "--json"]).stdout) as { files: { file: string; from: string }[] };
      const from = (file: string) => status.files.find((f) => f.file === file)?.from;
      expect(from(work)).toBe("omp profile work");
      expect(from(late)).toBe("omp profile late");
      expect(from(main)).toBe("omp");
      expect(from(replica)).toBe("omp collab (replicas)");
      expect(m.run(["status"]).stdout).toContain("from omp profile work");
    } finally {
      await m.cleanup();
    }
  }, 120_000);

  it("pulls an omp session into omp's tree where ~/.omp exists, pi's elsewhere; --root overrides", async () => {
    const [a, b, c] = [0, 1, 2].map(() => machine(server.url, server.token));
    try {
      // The project lives under b's home folder: omp names its folder relative to it.
      const cwd = join(b.home, "proj", "app");
      const file = write(a, join(a.home, ".omp", "agent", "sessions", "-x"), "pull me", cwd);
      const id = sessionIdOf(file);
      expect(a.run(["push"]).code).toBe(0);
      mkdirSync(join(b.home, ".omp"), { recursive: true });
      const pulled = b.run(["pull", id]);
      expect(pulled.code, pulled.stderr).toBe(0);
      const there = pulled.stdout.trim();
      expect(there.startsWith(`${join(b.home, ".omp", "agent", "sessions", "-proj-app")}/`)).toBe(true);
      expect(readFileSync(there)).toEqual(readFileSync(file));
      // No ~/.omp here: where pi looks.
      const toPi = c.run(["pull", id]);
      expect(toPi.code, toPi.stderr).toBe(0);
      expect(toPi.stdout.trim().startsWith(join(c.sessionsRoot, `--${cwd.slice(1).replaceAll("/", "-")}--`))).toBe(
        true,
      );
      const rooted = c.run(["pull", id, "--root", join(c.home, "elsewhere")]);
      expect(rooted.code, rooted.stderr).toBe(0);
      expect(rooted.stdout.trim().startsWith(`${join(c.home, "elsewhere")}/`)).toBe(true);
      expect(b.run(["pull", "--help"]).stdout).toContain("~/.omp/agent/sessions/<folder>/");
    } finally {
      for (const m of [a, b, c]) await m.cleanup();
    }
  }, 120_000);
});
