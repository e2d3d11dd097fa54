/**
 * Appends that race: concurrent PUTs of one session each answer a status a client acts on
 * (200, or 503 with Retry-After when the session kept changing under one), never a 500.
 */
import { type MetaStore, RevisionConflictError } from "@pisync/store";
import { describeOnEveryStore } from "@pisync/testing";
import { expect, it } from "vitest";
import { client, makeApp, userToken } from "./harness.js";

const header = (id: string, n: number) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: `/w${n}` })}\n`;

describeOnEveryStore("contended appends", (pair, name) => {
  it("twelve concurrent PUTs of one session: each 200 or 503 with Retry-After, never 500", async () => {
    const c = client(makeApp(pair().stores), await userToken(pair().stores, "racer"));
    const id = `race-${name}`;
    expect((await c.put(id, header(id, 0))).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, n) => c.put(id, header(id, n + 1))));
    for (const r of answers) {
      expect([200, 503], await r.clone().text()).toContain(r.status);
      if (r.status === 503) expect(Number(r.headers.get("Retry-After"))).toBeGreaterThan(0);
    }
    expect(answers.some((r) => r.status === 200)).toBe(true);
  });

  it("a PUT that keeps losing the race answers 503 with Retry-After", async () => {
    const token = await userToken(pair().stores, "loser");
    const losing = Object.create(pair().stores.meta) as MetaStore;
    // Every commit finds the head changed: someone else always commits first.
    losing.commit = async (commit) => {
      throw new RevisionConflictError(await pair().stores.meta.getHead(commit.head.userId, commit.head.sessionId));
    };
    const c = client(makeApp({ ...pair().stores, meta: losing }), token);
    const r = await c.put(`lost-${name}`, header(`lost-${name}`, 1));
    expect(r.status).toBe(503);
    expect(r.headers.get("Retry-After")).toBe("1");
    expect(((await r.json()) as { error: string }).error).toContain("try again");
  });
});
