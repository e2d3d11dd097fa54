/**
 * oh-my-pi's title slot on this machine's side: the first line of its session files, a
 * fixed-width mutable header that omp overwrites in place on a rename. A change confined to it
 * is sent as a rename (`PUT /v1/sessions/:id/title`), never as a new generation; a slot renamed
 * on another machine is written into the file in place, as omp itself does.
 *
 * Which rename wins: the slot with the later `updatedAt` (omp's own stamp), whichever machine
 * looks first; two stamps alike are decided by their bytes. Every machine and the cloud thus
 * end with the same slot, the last rename's.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { titleSlotLength, titleSlotOf } from "@pisync/format";
import { readRange } from "./files.js";

/** A slot is 256 bytes as omp writes it; a first line longer than this is not looked at. */
const SLOT_WINDOW = 4096;

/** The length (with its `\n`) of the file's title slot, when its first line is one and lies within `complete`. */
export function slotLengthOf(path: string, complete: number): number | undefined {
  const length = titleSlotLength(readRange(path, 0, Math.min(complete, SLOT_WINDOW)));
  return length !== undefined && length <= complete ? length : undefined;
}

/** A short hash of a slot's bytes (the state keeps it to tell a local rename from a cloud one). */
export function slotHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 32);
}

/** Whether `cloud` is a title slot line of the same length as `local`, and which of the two wins (see above). */
export function slotWinner(local: Uint8Array, cloud: Uint8Array): "same" | "local" | "cloud" | "mismatch" {
  if (Buffer.from(local).equals(cloud)) return "same";
  const ours = titleSlotOf(local);
  const theirs =
    cloud.length === local.length && cloud.indexOf(0x0a) === cloud.length - 1 ? titleSlotOf(cloud) : undefined;
  if (!ours || !theirs) return "mismatch";
  if (ours.updatedAt !== theirs.updatedAt) return ours.updatedAt > theirs.updatedAt ? "local" : "cloud";
  return Buffer.compare(Buffer.from(local), Buffer.from(cloud)) > 0 ? "local" : "cloud";
}

/**
 * Writes `slot` over the file's first line in place, only while that line is still `expected`
 * (omp may have renamed meanwhile: then its rename stays and wins next time). Same length: no
 * other byte moves, and omp's appends (at the end) are not disturbed.
 */
export function writeSlot(path: string, expected: Uint8Array, slot: Uint8Array): boolean {
  if (expected.length !== slot.length) return false;
  const fd = openSync(path, "r+");
  try {
    const now = new Uint8Array(expected.length);
    if (readSync(fd, now, 0, now.length, 0) !== now.length || !Buffer.from(now).equals(expected)) return false;
    let at = 0;
    while (at < slot.length) at += writeSync(fd, slot, at, slot.length - at, at);
    return true;
  } finally {
    closeSync(fd);
  }
}
