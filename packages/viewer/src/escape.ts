/** The one place where text becomes HTML: every string from a session goes through here. */
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/** Raster images only, as `data:` URLs (SVG can carry script). */
const RASTER = /^image\/(png|jpeg|gif|webp)$/;

export function safeImageSrc(mimeType: unknown, data: unknown): string | undefined {
  if (typeof mimeType !== "string" || !RASTER.test(mimeType) || typeof data !== "string") return undefined;
  if (!/^[A-Za-z0-9+/=\s]*$/.test(data)) return undefined;
  return `data:${mimeType};base64,${data.replace(/\s+/g, "")}`;
}

/** Links only to http(s) and mailto. */
export function safeHref(href: unknown): string | undefined {
  if (typeof href !== "string") return undefined;
  try {
    const url = new URL(href);
    return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}
