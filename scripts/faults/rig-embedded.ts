/**
 * The embedded pair: the app as `npm start` runs it, on a data folder that is a small tmpfs
 * (when this process may mount one); its faults kill the app and fill the disk.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_USER } from "@pisync/api";
import { embeddedStores } from "@pisync/store/embedded";
import { appProcess } from "./app.js";
import { canMount, fill, free, mountTmpfs } from "./disk.js";
import { inventory } from "./inventory.js";
import { appKill, type Fault, type FaultSize, type Rig } from "./rig.js";
import { runVerify } from "./verify.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The disk filled to its last byte while the writers write for a phase, then freed: the tmpfs
 * filled by a file, or (not root) the app's file writes failing with ENOSPC while `flag` exists.
 */
function fullDisk(dataDir: string, flag: string | undefined): Fault {
  return {
    name: flag ? "full disk (injected ENOSPC)" : "full disk",
    async inject({ size }) {
      if (flag) writeFileSync(flag, "");
      else fill(dataDir);
      await sleep(Math.max(size.phaseMs, 2000));
      if (flag) rmSync(flag);
      else free(dataDir);
      return Date.now();
    },
  };
}

/** The embedded pair under `dir`. */
export async function embeddedRig(dir: string, size: FaultSize): Promise<Rig> {
  const dataDir = join(dir, "data");
  const unmount = canMount() ? mountTmpfs(dataDir, size.diskMb) : undefined;
  const flag = unmount ? undefined : join(dir, "enospc");
  const app = await appProcess(dataDir, undefined, flag);
  const faults: Fault[] = [];
  for (let n = 1; n <= size.appKills; n++) faults.push(appKill(n));
  faults.push(fullDisk(dataDir, flag));
  return {
    name: "embedded",
    app,
    faults,
    start: async () => void (await app.start()),
    async inventory(ids) {
      const stores = embeddedStores(dataDir);
      try {
        return await inventory(stores, LOCAL_USER, ids, dataDir);
      } finally {
        stores.close();
      }
    },
    verify: (repair) =>
      runVerify(["--data", dataDir, ...(repair ? ["--repair", "--min-age", "0"] : [])], process.env, 120_000),
    figures: () => ({ diskMb: unmount ? size.diskMb : 0 }),
    async close() {
      await app.stop();
      app.close();
      unmount?.();
    },
  };
}
