/**
 * `npm run verify -- [--user NAME] [--repair] [--min-age 1h] [--store embedded|aws] [--data DIR]`:
 * checks every user's (or one user's) stored sessions against their bytes and prints what is
 * wrong, one line per finding and a summary; with `--repair`, repairs what the stored bytes
 * prove (see packages/core/src/verify.ts). Exits 1 while anything is wrong, 2 on a usage error.
 */
import { parseArgs } from "node:util";
import { checkId, type Finding, SWEEP_MIN_AGE_MS, verifyStores } from "@pisync/core";
import * as z from "zod/mini";
import { chooseStore, fail, openChosen, STORE_OPTIONS, STORE_USAGE } from "./store-flags.js";

const USAGE = `usage: npm run verify -- [--user NAME] [--repair] [--min-age 1h|30m|90s|0] ${STORE_USAGE}`;

function usage(message: string): never {
  console.error(`npm run verify: ${message}\n${USAGE}`);
  process.exit(2);
}

const UNIT_MS = { h: 3600_000, m: 60_000, s: 1000 } as const;
/** `--min-age`: a number of hours, minutes or seconds (`1h`, `30m`, `90s`), or 0. */
const MinAge = z.pipe(
  z.string().check(z.regex(/^(0|\d+[hms])$/, "--min-age takes an age such as 1h, 30m, 90s or 0")),
  z.transform((text) =>
    text === "0" ? 0 : Number(text.slice(0, -1)) * UNIT_MS[text.slice(-1) as keyof typeof UNIT_MS],
  ),
);

let values: { user?: string; repair?: boolean; "min-age"?: string; store?: string; data?: string; create?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      user: { type: "string" },
      repair: { type: "boolean" },
      "min-age": { type: "string" },
      ...STORE_OPTIONS,
    },
  }));
} catch (error) {
  usage((error as Error).message);
}
const minAge =
  values["min-age"] === undefined
    ? { success: true as const, data: SWEEP_MIN_AGE_MS }
    : MinAge.safeParse(values["min-age"]);
if (!minAge.success) usage(minAge.error.issues.map((issue) => issue.message).join("; "));
if (values.user !== undefined) {
  try {
    checkId("--user", values.user);
  } catch (error) {
    usage((error as Error).message);
  }
}

let open: Awaited<ReturnType<typeof openChosen>>;
try {
  open = await openChosen(chooseStore(values));
} catch (error) {
  fail("npm run verify", error, USAGE);
}

/** One line: what, where, and whether it was repaired. */
function print(finding: Finding): void {
  const where = finding.key ?? [finding.userId, finding.sessionId].filter(Boolean).join("/");
  const state = finding.repaired ? "repaired" : finding.problem ? "WRONG" : "note";
  const session = finding.key && finding.sessionId ? ` (${finding.userId}/${finding.sessionId})` : "";
  console.log(`${state} ${finding.kind} ${where}${session}: ${finding.message}`);
}

try {
  const report = await verifyStores(open.stores, {
    userId: values.user,
    repair: values.repair ?? false,
    minAgeMs: minAge.data,
    deep: true,
    temporary: open.temporary,
    onFinding: print,
  });
  const repaired = report.findings.filter((finding) => finding.repaired).length;
  const young = report.young ? `; ${report.young} unreferenced objects younger than --min-age left alone` : "";
  console.log(
    `${open.where}: ${report.sessions} sessions, ${report.objects} objects checked: ${report.wrong} wrong, ${repaired} repaired${young}`,
  );
  process.exitCode = report.wrong > 0 ? 1 : 0;
} catch (error) {
  fail("npm run verify", error);
} finally {
  open.close();
}
