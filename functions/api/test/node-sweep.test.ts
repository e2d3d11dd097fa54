/**
 * The Node server sweeps by itself on its schedule: a head gone back one commit (its record lost,
 * its segment stored) is rolled forward without anyone running verify.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { embeddedStores } from "@pisync/store/embedded";
import { expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

it("rolls a head behind its stored segment forward on its schedule", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pisync-node-sweep-"));
  const lines: string[] = [];
  const server = await startNodeServer({
    port: 0,
    host: "127.0.0.1",
    dataDir: dir,
    log: (line) => lines.push(line),
    sweepEveryMs: 300,
  });
  const stores = embeddedStores(dir);
  try {
    const auth = { Authorization: `Bearer ${server.token}` };
    const header = `${JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
    const message = `${JSON.stringify({ type: "message", id: "m1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "acknowledged", timestamp: 1 } })}\n`;
    let offset = 0;
    let before: Awaited<ReturnType<typeof stores.meta.getHead>>;
    for (const body of [header, message]) {
      const r = await fetch(`${server.url}/v1/sessions/s`, {
        method: "PATCH",
        headers: { ...auth, "Upload-Offset": String(offset) },
        body,
      });
      expect(r.status).toBe(200);
      offset += body.length;
      if (body === header) before = await stores.meta.getHead("local", "s");
    }
    const after = await stores.meta.getHead("local", "s");
    if (!before || !after) throw new Error("no head");
    await stores.meta.commit({ head: { ...before, revision: after.revision + 1 }, expectedRevision: after.revision });
    expect((await stores.meta.getHead("local", "s"))?.current.length).toBe(header.length);

    let length = 0;
    for (let i = 0; i < 100 && length !== offset; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      length = (await stores.meta.getHead("local", "s"))?.current.length ?? 0;
    }
    expect(length).toBe(offset);
    expect(lines.some((line) => line.includes("sweep: head-behind") && line.includes("(repaired)"))).toBe(true);
    const raw = await fetch(`${server.url}/v1/sessions/s/raw`, { headers: { ...auth, "Accept-Encoding": "identity" } });
    expect(await raw.text()).toBe(header + message);
  } finally {
    stores.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
