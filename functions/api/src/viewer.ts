/**
 * The viewer (`@pisync/viewer`: Markdown, highlighting, credential masking, the page's assets),
 * loaded when it is first needed: a third of the Lambda bundle that an API request's cold start
 * never imports (in the bundle it is a chunk of its own). Share pages, HTML notices and the
 * share work load it here.
 */
import type { MiddlewareHandler } from "hono";
import { lazy } from "./lazy.js";

const viewerModule = lazy(() => import("@pisync/viewer"));

/** Loads the viewer, once; from then on {@link viewer} returns it. */
export const loadViewer = () => viewerModule.load();

/**
 * The loaded viewer, for code that runs synchronously behind {@link viewerLoaded} (the share
 * pages' routes).
 * @throws Error when called before {@link loadViewer} resolved (a route not behind the middleware).
 */
export function viewer(): typeof import("@pisync/viewer") {
  const loaded = viewerModule.loaded();
  if (!loaded) throw new Error("the viewer is used before loadViewer() resolved");
  return loaded;
}

/** Middleware: the routes behind it run with the viewer loaded. */
export const viewerLoaded: MiddlewareHandler = async (_c, next) => {
  await loadViewer();
  await next();
};
