/**
 * oh-my-pi's images stored as blobs: an image part whose `data` is `blob:sha256:<hex>` (omp
 * moves image data of 1,024 characters or more to its blob store). The page that renders it
 * says where this origin serves its session's blobs (`blobs`, a URL prefix the hash is appended
 * to); rendering is synchronous, so the prefix is held for the length of one render only.
 */

const BLOB_REF = /^blob:sha256:([a-f0-9]{64})$/;
const RASTER = /^image\/(png|jpeg|gif|webp)$/;

let current: string | undefined;

/** Runs `render` with images' blobs served under `blobs` (undefined: named, not loaded). */
export function withBlobs<T>(blobs: string | undefined, render: () => T): T {
  const outer = current;
  current = blobs;
  try {
    return render();
  } finally {
    current = outer;
  }
}

/** The hash an image part's `data` names, when it is a blob reference. */
export function blobHashOf(data: unknown): string | undefined {
  return typeof data === "string" ? BLOB_REF.exec(data)?.[1] : undefined;
}

/**
 * The URL of a raster image stored as a blob, under the current render's prefix; undefined when
 * the part is not one, or nothing serves blobs here.
 */
export function blobImageSrc(mimeType: unknown, data: unknown): string | undefined {
  const hash = blobHashOf(data);
  if (!hash || current === undefined || typeof mimeType !== "string" || !RASTER.test(mimeType)) return undefined;
  return `${current}${hash}`;
}
