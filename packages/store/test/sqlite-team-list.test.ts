/** The embedded teams store opens a file from before its team list was kept by activity. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "@pisync/store/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteTeamStore } from "../src/embedded/sqlite-team-store.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-team-list-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the embedded team list on an earlier file", () => {
  it("gains the activity column and index; earlier sessions list last until a write moves them up", async () => {
    const path = join(dir, "meta.sqlite");
    const old = openSqlite(path);
    old.exec(`CREATE TABLE team_sessions (
      owner TEXT NOT NULL, session_id TEXT NOT NULL, team_id TEXT NOT NULL, data TEXT NOT NULL,
      PRIMARY KEY (owner, session_id)) WITHOUT ROWID;`);
    const record = { teamId: "t1", owner: "ann", sessionId: "early", addedAt: "2026-01-01T00:00:00.000Z" };
    old.prepare("INSERT INTO team_sessions VALUES (?, ?, ?, ?)").run("ann", "early", "t1", JSON.stringify(record));
    old.close();

    const teams = new SqliteTeamStore(path);
    try {
      await teams.setSessionTeam("bob", "later", { ...record, owner: "bob", sessionId: "later", lastAt: "2026-01-02" });
      const ids = async () => (await teams.teamSessionPage("t1", { limit: 10 })).sessions.map((s) => s.sessionId);
      expect(await ids()).toEqual(["later", "early"]);
      await teams.touchTeamSession("ann", "early", "t1", "2026-01-03");
      expect(await ids()).toEqual(["early", "later"]);
    } finally {
      teams.close();
    }
  });
});
