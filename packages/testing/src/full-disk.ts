/**
 * A folder on a disk that is full, for the embedded store's out-of-space answers. As root it is
 * a real one: a small tmpfs, filled up to its last byte by a filler file (the kernel answers
 * ENOSPC to the blob store and SQLITE_FULL to SQLite). Otherwise the ENOSPC is injected at the
 * file system boundary: while "full", every `FileHandle.writeFile` of this process fails as the
 * kernel would fail it (SQLite, which writes natively, is then not covered).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { open, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface FullDisk {
  /** The folder to put the store in (empty; the filler lives beside it, not in it). */
  dir: string;
  /** Whether the disk is a real tmpfs (else ENOSPC is injected). */
  real: boolean;
  /** Fills the disk: from now on a write that needs room fails with ENOSPC. */
  fill(): Promise<void>;
  /** Makes room again. */
  free(): Promise<void>;
  /** Unmounts (or stops injecting) and removes the folder. */
  close(): Promise<void>;
}

const FILLER_CHUNK = 64 * 1024;

/** Whether this process may mount a tmpfs. */
function canMount(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0 && process.platform === "linux";
}

/** A small disk (`sizeMb`) mounted at `mountPoint`, or an injected one when this process may not mount. */
export async function fullDisk(mountPoint: string, sizeMb = 4): Promise<FullDisk> {
  mkdirSync(mountPoint, { recursive: true });
  if (canMount()) {
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m`, "tmpfs", mountPoint], { stdio: "ignore" });
      return realDisk(mountPoint);
    } catch {
      // No mount here after all (a container without the capability): inject instead.
    }
  }
  return injectedDisk(mountPoint);
}

function realDisk(mountPoint: string): FullDisk {
  const dir = join(mountPoint, "data");
  const filler = join(mountPoint, "filler");
  mkdirSync(dir);
  return {
    dir,
    real: true,
    async fill() {
      const file = await open(filler, "a");
      try {
        const chunk = new Uint8Array(FILLER_CHUNK).fill(0x61);
        // Down to single bytes at the end, so not a byte of room is left.
        for (let size = FILLER_CHUNK; size >= 1; size = Math.floor(size / 2)) {
          for (;;) {
            try {
              await file.write(chunk, 0, size);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
              throw error;
            }
          }
        }
      } finally {
        await file.close();
      }
    },
    async free() {
      rmSync(filler, { force: true });
    },
    async close() {
      execFileSync("umount", [mountPoint], { stdio: "ignore" });
      rmSync(mountPoint, { recursive: true, force: true });
    },
  };
}

async function injectedDisk(mountPoint: string): Promise<FullDisk> {
  const dir = join(mountPoint, "data");
  mkdirSync(dir);
  // FileHandle's prototype, from a handle of our own.
  const probe = join(mountPoint, "probe");
  await writeFile(probe, "");
  const handle = await open(probe, "r");
  const prototype = Object.getPrototypeOf(handle) as { writeFile: (...args: unknown[]) => Promise<void> };
  await handle.close();
  rmSync(probe);
  const original = prototype.writeFile;
  const restore = () => {
    prototype.writeFile = original;
  };
  return {
    dir,
    real: false,
    async fill() {
      prototype.writeFile = () =>
        Promise.reject(
          Object.assign(new Error("ENOSPC: no space left on device, write"), {
            code: "ENOSPC",
            errno: -28,
            syscall: "write",
          }),
        );
    },
    async free() {
      restore();
    },
    async close() {
      restore();
      rmSync(mountPoint, { recursive: true, force: true });
    },
  };
}
