/**
 * The preview image renderer (satori and resvg, fonts from an npm package): a 1200×630 PNG for
 * ordinary and hostile cards (a huge title, RTL overrides, emoji, markup, control characters),
 * and what loading it costs (reported: it is kept out of the API's cold path).
 */
import { describe, expect, it } from "vitest";

/** Width and height from a PNG's IHDR. */
function size(png: Uint8Array): [number, number] {
  expect(Buffer.from(png.slice(1, 4)).toString()).toBe("PNG");
  const view = new DataView(png.buffer, png.byteOffset);
  return [view.getUint32(16), view.getUint32(20)];
}

describe("the preview image", () => {
  it("renders hostile cards without failing, 1200×630 each", async () => {
    const t0 = performance.now();
    const { layoutText, renderPreview } = await import("../src/preview/render.js");
    const imported = performance.now() - t0;
    const t1 = performance.now();
    const first = await renderPreview({
      title: "Fix the flaky login test",
      facts: "claude-sonnet-4-5 · 12 messages · 5 tool calls · $0.12",
      lines: [
        { who: "user", text: "The login test fails one run in ten." },
        { who: "assistant", text: "Let me look at the test first." },
      ],
    });
    const rendered = performance.now() - t1;
    expect(size(first)).toEqual([1200, 630]);
    const hostile = [
      "x".repeat(1_000_000),
      "\u202Egnp.exe\u202C evil \u2066rtl\u2069 \u200F",
      "🔥🚀👩‍👩‍👧‍👦 emoji ✔️ 🇺🇸",
      '<script>alert(1)</script><img src=x onerror="x"> **bold** `code`',
      "\u0000\u0007\u001b[31mred\u001b[0m \uFFFF \uD800 lone surrogate",
      "مرحبا بالعالم שלום עולם 你好世界",
    ];
    for (const title of hostile) {
      const png = await renderPreview({ title, facts: title, lines: [{ who: "user", text: title }] });
      expect(size(png)).toEqual([1200, 630]);
    }
    const gone = await renderPreview({ title: "", facts: "", lines: [], gone: "this link has expired" });
    expect(size(gone)).toEqual([1200, 630]);
    // What is laid out has no control or bidirectional characters, and is cut.
    expect(layoutText("a\u202Eb\u0000c 🔥", 10)).toBe("a b c");
    expect(Array.from(layoutText("y".repeat(500), 140))).toHaveLength(140);
    console.log(
      `preview renderer: import ${Math.round(imported)} ms, first image ${Math.round(rendered)} ms (WebAssembly and fonts loaded)`,
    );
  }, 120_000);
});
