/** A worker of the share pool (worker-pool.ts): each export is one kind of task. */
import { inlineWork } from "./share-work.js";

export const renderPage = inlineWork.renderPage;
export const renderEntries = inlineWork.renderEntries;
export const maskLines = inlineWork.maskLines;
export const maskTexts = inlineWork.maskTexts;
export const renderPreview = inlineWork.renderPreview;
