/**
 * The preview image of a share link (1200×630 PNG), drawn on the server: satori lays out the
 * card and turns its text into paths (the fonts ship in `@fontsource/inter`: nothing is
 * fetched at run time), resvg (WebAssembly: no native addon to build for Lambda) rasterises
 * it. This module is heavy to load (a few MB of WebAssembly and fonts): the routes import it
 * on the first preview asked for, never on an API request's cold start.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { initWasm, Resvg } from "@resvg/resvg-wasm";
import satori from "satori";

/** What the image shows: plain, masked text only (the card text and a few lines of the conversation). */
export interface PreviewCard {
  title: string;
  /** One line of facts: model, turns, cost. */
  facts: string;
  /** The first lines of the conversation, each with who said it. */
  lines: { who: "user" | "assistant"; text: string }[];
  /** A revoked or expired link: the image says so instead. */
  gone?: string;
}

export const WIDTH = 1200;
export const HEIGHT = 630;

/** Characters of each text laid out at most (a hostile title is cut before layout, not after). */
const MAX = { title: 140, facts: 160, line: 160 } as const;

const require = createRequire(import.meta.url);

/**
 * The files the renderer reads: from their packages, or (in the Lambda bundle, which ships no
 * node_modules) beside the bundle, where its build copies them (`infra/lib/bundling.ts`).
 */
export const PREVIEW_ASSETS = [
  "@resvg/resvg-wasm/index_bg.wasm",
  "@fontsource/inter/files/inter-latin-400-normal.woff",
  "@fontsource/inter/files/inter-latin-700-normal.woff",
] as const;

/** Where an asset is: its package's file, else the bundle's copy (chunks live in `chunks/`). */
function assetPath(specifier: (typeof PREVIEW_ASSETS)[number]): string {
  try {
    return require.resolve(specifier);
  } catch {
    return fileURLToPath(new URL(`../${basename(specifier)}`, import.meta.url));
  }
}

type Font = { name: string; data: ArrayBuffer; weight: 400 | 700; style: "normal" };

let ready: Promise<Font[]> | undefined;

/** The WebAssembly and the fonts, loaded once. */
function load(): Promise<Font[]> {
  ready ??= (async () => {
    const [wasm, regular, bold] = await Promise.all(PREVIEW_ASSETS.map((asset) => readFile(assetPath(asset))));
    await initWasm(wasm);
    const buffer = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
    return [
      { name: "Inter", data: buffer(regular), weight: 400, style: "normal" },
      { name: "Inter", data: buffer(bold), weight: 700, style: "normal" },
    ];
  })();
  ready.catch(() => {
    ready = undefined;
  });
  return ready;
}

/**
 * One line of text safe to lay out: bidirectional controls (an RTL override would mirror what
 * follows it) and other invisible format characters dropped, whitespace made one space, cut.
 */
export function layoutText(value: string, max: number): string {
  const line = value
    // Emoji have no glyph in the shipped font: left out rather than drawn as boxes.
    .replace(/\p{Extended_Pictographic}|\p{Emoji_Modifier}|\uFE0E|\uFE0F/gu, "")
    .replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  const chars = Array.from(line);
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : line;
}

type Node = { type: string; props: Record<string, unknown> };
const el = (type: string, style: Record<string, unknown>, children: unknown): Node => ({
  type,
  props: { style, children },
});

/** The card as satori's element tree (plain objects: no JSX, no React). */
function tree(card: PreviewCard): Node {
  const muted = "#9aa1ab";
  const head = el(
    "div",
    { display: "flex", fontSize: 28, color: "#6ea1ff", fontWeight: 700, marginBottom: 18 },
    "pisync · a pi session",
  );
  if (card.gone) {
    return el("div", page(), [
      head,
      el("div", { display: "flex", fontSize: 60, fontWeight: 700 }, "This link is no longer available"),
      el("div", { display: "flex", fontSize: 32, color: muted, marginTop: 24 }, layoutText(card.gone, 120)),
    ]);
  }
  const lines = card.lines.slice(0, 4).map((line) =>
    el(
      "div",
      {
        display: "flex",
        fontSize: 26,
        lineHeight: 1.35,
        marginTop: 10,
        padding: "10px 16px",
        borderRadius: 10,
        background: line.who === "user" ? "#152036" : "#181b21",
        overflow: "hidden",
        maxHeight: 80,
        maxWidth: WIDTH - 120,
      },
      `${line.who === "user" ? "User" : "Assistant"}: ${layoutText(line.text, MAX.line)}`,
    ),
  );
  return el("div", page(), [
    head,
    el(
      "div",
      { display: "flex", fontSize: 52, fontWeight: 700, lineHeight: 1.15, maxHeight: 124, overflow: "hidden" },
      layoutText(card.title, MAX.title) || "A pi session",
    ),
    el("div", { display: "flex", fontSize: 28, color: muted, marginTop: 14 }, layoutText(card.facts, MAX.facts)),
    el("div", { display: "flex", flexDirection: "column", marginTop: 18, overflow: "hidden" }, lines),
  ]);
}

function page(): Record<string, unknown> {
  return {
    width: WIDTH,
    height: HEIGHT,
    display: "flex",
    flexDirection: "column",
    padding: "48px 60px",
    background: "#0f1115",
    color: "#e6e8eb",
    fontFamily: "Inter",
    overflow: "hidden",
  };
}

/** The card as a PNG, 1200×630. */
export async function renderPreview(card: PreviewCard): Promise<Uint8Array> {
  const fonts = await load();
  const svg = await satori(tree(card) as never, { width: WIDTH, height: HEIGHT, fonts });
  return new Resvg(svg, { fitTo: { mode: "original" } }).render().asPng();
}
