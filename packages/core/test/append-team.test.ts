/**
 * A write to a session in a team moves it up the team's list (the team read beside the write's
 * commit, then one conditional write); a session taken out of its team is not moved in again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { embeddedStores } from "@pisync/store/embedded";
import { afterAll, expect, it } from "vitest";
import { Appender, Teams } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-append-team-"));
const stores = embeddedStores(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (entry: object) => new TextEncoder().encode(`${JSON.stringify(entry)}\n`);
/** A session's first lines: its header and a message, both dated long before now. */
const start = (id: string) =>
  new Uint8Array([
    ...line({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }),
    ...message(`${id}-0`, "2026-01-01T00:00:00.000Z"),
  ]);
const message = (id: string, at: string) =>
  line({ type: "message", id, parentId: null, timestamp: at, message: { role: "user", content: `at ${at}` } });

it("the team's list follows the writes of its sessions, and only of its sessions", async () => {
  const appender = new Appender(stores);
  const teams = new Teams(stores.teams, stores.meta);
  const { id: team } = await teams.create("ann", "acme");
  const first = await appender.append({ userId: "ann", sessionId: "s1", offset: 0, body: start("s1") });
  const other = await appender.append({ userId: "ann", sessionId: "s2", offset: 0, body: start("s2") });
  await teams.setSessionTeam("ann", "s1", team);
  await teams.setSessionTeam("ann", "s2", team);
  await appender.append({
    userId: "ann",
    sessionId: "s2",
    offset: other.offset,
    body: message("a", "2026-01-02T00:00:00.000Z"),
  });
  const order = async () => (await teams.sessions("ann", team, { limit: 10 })).sessions.map((s) => s.sessionId);
  expect(await order()).toEqual(["s2", "s1"]);

  const written = await appender.append({
    userId: "ann",
    sessionId: "s1",
    offset: first.offset,
    body: message("b", "2026-01-03T00:00:00.000Z"),
  });
  expect(await order()).toEqual(["s1", "s2"]);

  await teams.setSessionTeam("ann", "s1", null);
  const outside = await appender.append({
    userId: "ann",
    sessionId: "s1",
    offset: written.offset,
    body: message("c", "2026-01-04T00:00:00.000Z"),
  });
  expect(outside.offset).toBeGreaterThan(written.offset);
  expect(await order()).toEqual(["s2"]);
});
