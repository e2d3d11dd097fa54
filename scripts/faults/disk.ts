/**
 * A small disk for the embedded store: a tmpfs of a fixed size mounted on its data folder
 * (root only), filled to the last byte by a filler file and freed again by removing it.
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Whether this process may mount a tmpfs (it runs as root). */
export function canMount(): boolean {
  return process.getuid?.() === 0;
}

/** Mounts a tmpfs of `megabytes` on `dir`; answers its unmount (idempotent; also run at exit). */
export function mountTmpfs(dir: string, megabytes: number): () => void {
  mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m,mode=0700`, "tmpfs", dir]);
  let mounted = true;
  const unmount = () => {
    if (!mounted) return;
    mounted = false;
    // Lazy: a process killed a moment ago may still hold a file open.
    execFileSync("umount", ["-l", dir]);
  };
  process.once("exit", unmount);
  return unmount;
}

const FILLER = "faults-filler";

/** Fills the disk of `dir` until a write fails with ENOSPC; answers the bytes written. */
export function fill(dir: string): number {
  const fd = openSync(join(dir, FILLER), "w");
  const block = Buffer.alloc(1 << 20, 0x61);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  }
  // The last megabyte may have fit in part: top up in smaller writes, to the very last block.
  for (const size of [65536, 4096, 1]) {
    try {
      for (;;) written += writeSync(fd, block, 0, size);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
    }
  }
  closeSync(fd);
  return written;
}

/** Removes the filler: the disk has room again. */
export function free(dir: string): void {
  rmSync(join(dir, FILLER), { force: true });
}
