/**
 * Records what pi's built-in tools really store (arguments, content, details) in pi 0.73.1 and
 * pi 1.6.0, into tools-recorded.json, the shapes the tool-block tests render. Run it again only
 * when a pi version changes:
 *
 *   node --import tsx packages/viewer/test/tools-record.ts
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { node22 } from "@pisync/testing/node22";

const child = fileURLToPath(new URL("./tools-record-child.mjs", import.meta.url));
const record = (node: string, pkg: string) => JSON.parse(execFileSync(node, [child, pkg], { encoding: "utf8" }));
const recorded = {
  "0.73.1": record(process.execPath, "@mariozechner/pi-coding-agent"),
  "1.6.0": record(node22, "@earendil-works/pi-coding-agent"),
};
writeFileSync(
  fileURLToPath(new URL("./tools-recorded.json", import.meta.url)),
  `${JSON.stringify(recorded, null, 1)}\n`,
);
