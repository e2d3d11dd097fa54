/**
 * The signed-in library's pages (`@pisync/viewer/library`: the pages, their CSS and script),
 * loaded when a page is first asked for: API requests (an append, a sync) never need them, and
 * in the Lambda bundle they are a chunk a cold start does not read.
 */
import { lazy } from "./lazy.js";

const pages = lazy(() => import("@pisync/viewer/library"));

/** The library's pages, loaded once. */
export const libraryPages = () => pages.load();
