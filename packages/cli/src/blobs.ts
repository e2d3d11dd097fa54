/**
 * oh-my-pi keeps images outside the session file, in `<agent>/blobs/<sha256>` (the hash of the
 * raw bytes), and writes `blob:sha256:<hex>` in the entries. The session's bytes stay as they
 * are; the blobs they name are uploaded once each (by hash: the state remembers, the server is
 * asked), and a pull brings them back.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Api } from "./api.js";
import { writeAtomic } from "./files.js";
import type { Logger } from "./log.js";
import type { StateStore } from "./state.js";

const REF = /blob:sha256:([a-f0-9]{64})/g;

/** The blob hashes a run of session bytes names. */
export function blobRefs(bytes: Uint8Array): string[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  return [...new Set([...text.matchAll(REF)].map((m) => m[1]))];
}

/** `<agent>/blobs` for a file under `<agent>/sessions/`. */
export function blobsDirFor(sessionFile: string): string | undefined {
  let dir = dirname(sessionFile);
  for (let i = 0; i < 6 && dir !== dirname(dir); i++) {
    if (basename(dir) === "sessions") return join(dirname(dir), "blobs");
    dir = dirname(dir);
  }
  return undefined;
}

/** Uploads the blobs `bytes` names that the server does not have yet. */
export async function sendBlobs(api: Api, state: StateStore, sessionFile: string, bytes: Uint8Array, log: Logger) {
  const dir = blobsDirFor(sessionFile);
  if (!dir) return;
  for (const hash of blobRefs(bytes)) {
    if (state.hasBlob(hash)) continue;
    const path = join(dir, hash);
    if (!existsSync(path)) continue; // not written yet, or kept elsewhere: the entry still names it
    if (!(await api.hasBlob(hash))) {
      const data = readFileSync(path);
      if (createHash("sha256").update(data).digest("hex") !== hash) continue;
      await api.putBlob(hash, data);
      log.event("blob", { hash, bytes: data.length });
    }
    state.addBlob(hash);
  }
}

/**
 * Sends the blobs an append's answer says the server lacks (`missingBlobs`: a delete of the last
 * session naming one raced this append, or the state remembered one the server no longer has),
 * and returns the answer.
 */
export async function resendMissing<T extends { missingBlobs?: string[] }>(
  api: Api,
  state: StateStore,
  sessionFile: string,
  answer: T,
  log: Logger,
): Promise<T> {
  const dir = blobsDirFor(sessionFile);
  const missing = (answer.missingBlobs ?? []).filter((hash) => /^[a-f0-9]{64}$/.test(hash));
  if (!dir || !missing.length) return answer;
  for (const hash of missing) {
    state.forgetBlob(hash);
    const path = join(dir, hash);
    if (!existsSync(path)) continue;
    const data = readFileSync(path);
    if (createHash("sha256").update(data).digest("hex") !== hash) continue;
    await api.putBlob(hash, data);
    log.event("blob", { hash, bytes: data.length, resent: true });
    state.addBlob(hash);
  }
  return answer;
}

/** Brings back the blobs a pulled session names, into `<agent>/blobs`. */
export async function fetchBlobs(api: Api, sessionFile: string, bytes: Uint8Array): Promise<number> {
  const dir = blobsDirFor(sessionFile);
  if (!dir) return 0;
  let fetched = 0;
  for (const hash of blobRefs(bytes)) {
    const path = join(dir, hash);
    if (existsSync(path)) continue;
    const data = await api.getBlob(hash);
    if (!data || createHash("sha256").update(data).digest("hex") !== hash) continue;
    writeAtomic(path, data, 0o644);
    fetched++;
  }
  return fetched;
}
