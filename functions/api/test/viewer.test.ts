/** The viewer loaded on demand: share routes get it through the middleware, never before. */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { loadViewer, viewer, viewerLoaded } from "../src/viewer.js";

describe("the viewer, loaded on demand", () => {
  it("is not there before it is loaded; the middleware loads it for the routes behind it", async () => {
    expect(() => viewer()).toThrow(/before loadViewer/);
    const app = new Hono();
    app.use("/s/*", viewerLoaded);
    app.get("/s/style.css", (c) => c.body(viewer().STYLE_CSS));
    const answer = await app.request("/s/style.css");
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe(viewer().STYLE_CSS);
    expect(viewer().STYLE_CSS.length).toBeGreaterThan(100);
    // Loaded once: every later call answers the same module.
    expect(await loadViewer()).toBe(viewer());
  });
});
