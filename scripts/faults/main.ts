/**
 * `npm run faults`: the fault suite on both store pairs; prints the table and every failed
 * check, and exits 1 when a check fails.
 *   npm run faults -- [--size full|small] [--pair embedded|aws]... [--parallel] [--seed N] [--keep] [--json FILE]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as z from "zod/mini";
import { SIZES } from "./rig.js";
import { type PairName, runFaults } from "./run.js";
import { formatNotes, formatTable } from "./table.js";
import { failedChecks } from "./verdict.js";

const USAGE = "usage: npm run faults -- [--size full|small] [--pair embedded|aws]... [--seed N] [--keep] [--json FILE]";

const Flags = z.object({
  size: z.enum(["full", "small"]),
  pair: z.array(z.enum(["embedded", "aws"])),
  seed: z.pipe(z.string().check(z.regex(/^\d{1,9}$/, "--seed takes a number")), z.transform(Number)),
  keep: z.boolean(),
  parallel: z.boolean(),
  json: z.optional(z.string()),
});

let flags: z.infer<typeof Flags>;
try {
  const { values } = parseArgs({
    options: {
      size: { type: "string", default: "full" },
      pair: { type: "string", multiple: true, default: ["embedded", "aws"] },
      seed: { type: "string", default: "1" },
      keep: { type: "boolean", default: false },
      parallel: { type: "boolean", default: false },
      json: { type: "string" },
    },
  });
  flags = Flags.parse(values);
} catch (error) {
  const message = error instanceof z.core.$ZodError ? error.issues.map((i) => i.message).join("; ") : String(error);
  console.error(`npm run faults: ${message}\n${USAGE}`);
  process.exit(2);
}

// The AWS SDK warns once per process that its 2027 releases will need Node 22; ours are pinned.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
// Ctrl-C stops the run: the exit handlers kill every child and unmount the disk.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130));

const report = await runFaults({
  size: SIZES[flags.size],
  pairs: flags.pair as PairName[],
  seed: flags.seed,
  keep: flags.keep,
  parallel: flags.parallel,
  log: (line) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`),
});
if (flags.json) writeFileSync(flags.json, `${JSON.stringify(report, null, 2)}\n`);
console.log(formatTable(report));
console.log(`\n${formatNotes(report)}`);
const failed = failedChecks(report);
console.log(
  failed.length
    ? `\n${failed.length} checks failed:\n${failed.map((f) => `- ${f}`).join("\n")}`
    : "\nevery check passed",
);
console.log(`(${flags.size} run, ${(report.durationMs / 1000).toFixed(0)} s)`);
process.exit(failed.length ? 1 : 0);
