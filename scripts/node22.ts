/** The Node 22 binary, for the benchmarks: kept with the test helpers (`@pisync/testing/node22`), which run pi 1.x under it. */
export { node22 } from "@pisync/testing/node22";
