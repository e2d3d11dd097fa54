/** Previews: a share masks an entry's text before the preview is cut, so nothing shows half cut. */
import { describe, expect, it } from "vitest";
import { isCutPreview, previewOf } from "../src/ingest.js";

const token = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;
const crossing = { type: "message", message: { role: "user", content: `${"context ".repeat(13)}${token}` } };

describe("previews", () => {
  it("cuts at 120 characters, and says so", () => {
    const preview = previewOf(crossing) as string;
    expect(preview).toHaveLength(120);
    expect(isCutPreview(preview)).toBe(true);
    expect(preview).toContain(token.slice(0, 12)); // what a share must never show
    expect(isCutPreview(previewOf({ type: "label", label: "short" }) as string)).toBe(false);
  });

  it("masks before it cuts", () => {
    const preview = previewOf(crossing, (text) => text.replace(token, "[masked: github-token]")) as string;
    expect(preview).not.toContain(token.slice(0, 12));
    expect(preview.startsWith("context context")).toBe(true);
  });
});
