/**
 * oh-my-pi's images kept as blobs (`blob:sha256:<hex>` in an image part) on the share page, in
 * a real Chromium: served from this origin under the page's CSP, the image loads; a blob the
 * backup lacks says so; a share reads only blobs its session names. The Markdown form and the
 * owner's library link them too.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { line } from "@pisync/testing";
import { freePort } from "@pisync/testing/servers";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

/** An 8×8 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const ts = (s: number) => new Date(Date.UTC(2026, 0, 1, 9, 0, s)).toISOString();

describe("images kept as blobs, in a browser", () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  let dir: string;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${server.token}`, ...(init.headers ?? {}) },
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pisync-blob-images-"));
    server = await startNodeServer({ port: await freePort(), host: "127.0.0.1", dataDir: dir, log: () => {} });
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows the image from this origin; a missing blob says so; other blobs stay out of reach", async () => {
    const held = sha(PNG);
    const missing = "f".repeat(64);
    // A blob of this user the session never names.
    const other = Buffer.concat([PNG, Buffer.from("other")]);
    for (const [hash, bytes] of [
      [held, PNG],
      [sha(other), other],
    ] as const) {
      expect((await api(`/v1/blobs/${hash}`, { method: "PUT", body: bytes })).status).toBe(204);
    }
    const id = "omp-images";
    const body =
      line({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/home/dev/app" }) +
      line({
        type: "message",
        id: "u1",
        parentId: null,
        timestamp: ts(1),
        message: {
          role: "user",
          content: [
            { type: "text", text: "what is in this screenshot?" },
            { type: "image", mimeType: "image/png", data: `blob:sha256:${held}` },
            { type: "image", mimeType: "image/png", data: `blob:sha256:${missing}` },
          ],
          timestamp: 1,
        },
      });
    expect((await api(`/v1/sessions/${id}`, { method: "PATCH", headers: { "Upload-Offset": "0" }, body })).status).toBe(
      200,
    );
    const shared = (await (
      await api(`/v1/sessions/${id}/shares`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      })
    ).json()) as { url: string };

    const page = await browser.newPage();
    const failures: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) failures.push(m.text());
    });
    await page.goto(shared.url);
    const images = page.locator("img.shot");
    await expect(images.count()).resolves.toBe(2);
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll("img.shot")).every((img) => (img as HTMLImageElement).complete),
    );
    const loaded = await images.evaluateAll((all) =>
      all.map((img) => ({
        src: img.getAttribute("src"),
        width: (img as HTMLImageElement).naturalWidth,
        alt: img.getAttribute("alt"),
      })),
    );
    expect(loaded[0]).toMatchObject({ width: 8 });
    expect(loaded[0].src).toMatch(new RegExp(`^/s/[^/]+/blobs/${held}$`));
    expect(loaded[1].width).toBe(0);
    expect(loaded[1].alt).toContain("missing from the backup");
    expect(failures).toEqual([]);

    const token = new URL(shared.url).pathname.split("/")[2];
    const direct = await fetch(`${server.url}/s/${token}/blobs/${held}`);
    expect(direct.status).toBe(200);
    expect(direct.headers.get("Content-Type")).toBe("image/png");
    expect(direct.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    // A blob of the owner that this session does not name, and a missing one: not there.
    expect((await fetch(`${server.url}/s/${token}/blobs/${sha(other)}`)).status).toBe(404);
    expect((await fetch(`${server.url}/s/${token}/blobs/${missing}`)).status).toBe(404);
    expect((await fetch(`${server.url}/s/${token}/blobs/not-a-hash`)).status).toBeGreaterThanOrEqual(400);

    // The Markdown form links the image; the owner's library serves it too.
    const markdown = await (await fetch(`${server.url}/s/${token}/md`)).text();
    expect(markdown).toContain(`![image](${server.url}/s/${token}/blobs/${held})`);
    const owned = await api(`/sessions/${id}/blobs/${held}`);
    expect(owned.status).toBe(200);
    expect(Buffer.from(await owned.arrayBuffer())).toEqual(PNG);
  }, 60_000);
});
