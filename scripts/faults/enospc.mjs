// Loaded with `--import` into the embedded app when the suite cannot mount a small disk (it does
// not run as root): while the file PISYNC_FAULTS_ENOSPC names exists, every write to a file
// opened for writing through `fs/promises` fails with ENOSPC, as on a full disk. (SQLite's own
// writes are not reached: a real full disk, the tmpfs, is the better test.)
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const flag = process.env.PISYNC_FAULTS_ENOSPC;
const full = () => Boolean(flag && fs.existsSync(flag));
const noSpace = () =>
  Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });

const open = fs.promises.open;
fs.promises.open = async (path, flags, mode) => {
  const handle = await open(path, flags, mode);
  if (/^[wa]/.test(String(flags ?? "r"))) {
    for (const method of ["write", "writeFile", "writev", "appendFile"]) {
      const original = handle[method].bind(handle);
      handle[method] = async (...args) => {
        if (full()) throw noSpace();
        return original(...args);
      };
    }
  }
  return handle;
};
syncBuiltinESMExports();
