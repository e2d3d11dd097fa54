// The share pool's worker when running from source (`npm start`, tests): share-worker.ts
// through tsx. A built server loads share-worker.js directly.
import { tsImport } from "tsx/esm/api";

const work = await tsImport("./share-worker.ts", import.meta.url);

export const renderPage = (input) => work.renderPage(input);
export const renderEntries = (input) => work.renderEntries(input);
export const maskLines = (lines) => work.maskLines(lines);
export const maskTexts = (texts) => work.maskTexts(texts);
export const renderPreview = (card) => work.renderPreview(card);
