/**
 * The sweep of a user's index objects: what the pointer names (its base's manifest, chunks, patches and hot pages,
 * its log) stays; so does what it retired less than the minimum age ago (a reader that read the
 * previous pointer may still fetch it) and every object younger than that (a writer's upload
 * whose pointer write is still on its way). The rest — folded log entries, replaced chunks and
 * manifests, uploads of writers that lost their race or died — is removed.
 */
import { type BlobStore, NotFoundError } from "@pisync/store";
import { decodeManifest, userPrefix } from "./objects.js";
import type { Pointers } from "./pointers.js";

const isManifest = (key: string) => key.includes("/base/");

/** Sweeps one user's objects (see the module's comment); the count removed. */
export async function sweepUser(
  blobs: BlobStore,
  pointers: Pointers,
  userId: string,
  minAgeMs: number,
): Promise<{ removed: number }> {
  const now = Date.now();
  const pointer = await pointers.get(userId);
  const recent = pointer?.retired.filter((r) => now - r.at < minAgeMs) ?? [];
  const keep = new Set<string>([...(pointer?.log ?? []).map((e) => e.key), ...recent.map((r) => r.key)]);
  const manifests = [...(pointer?.base ? [pointer.base.key] : []), ...recent.map((r) => r.key).filter(isManifest)];
  for (const key of manifests) {
    keep.add(key);
    try {
      const manifest = decodeManifest(await blobs.get(key));
      for (const chunk of manifest.chunks) keep.add(chunk);
      if (manifest.hot) keep.add(manifest.hot);
      for (const patch of manifest.patches ?? []) {
        keep.add(patch.key);
        if (patch.hot) keep.add(patch.hot);
      }
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
  const stale = (await blobs.listObjects(userPrefix(userId)))
    .filter((o) => !keep.has(o.key) && now - o.modifiedAt.getTime() >= minAgeMs)
    .map((o) => o.key);
  if (stale.length) await blobs.delete(stale);
  if (pointer && recent.length < pointer.retired.length) {
    // Forgets what it may now remove; a writer that moved the pointer meanwhile wins, and the next sweep forgets.
    await pointers.move(userId, pointer, { ...pointer, rev: pointer.rev + 1, retired: recent }).catch(() => false);
  }
  return { removed: stale.length };
}
