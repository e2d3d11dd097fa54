/**
 * A rho-shaped session (the in-repo fixture built from rho's documentation) and oh-my-pi's
 * titles, through the API on both store pairs: the share page and its Markdown show rho's loop
 * notices and a message's attachments as such; the title is the header's, then the latest
 * `title_change`, in the list, the page and its Markdown.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { newShareKeys } from "@pisync/core";
import { describeOnEveryStore, line, sessionHeader, userLine } from "@pisync/testing";
import { inRepoCorpus } from "@pisync/testing/fixtures";
import { expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

const makeApp = (stores: Parameters<typeof createApp>[0]["stores"]) => {
  const keys = newShareKeys();
  return createApp({ stores, shareKeys: async () => keys, log: () => {} });
};

describeOnEveryStore("rho's and omp's sessions on pages", (pair, name) => {
  it("rho's notices and attachments show as such, on the page and in the Markdown", async () => {
    const app = makeApp(pair().stores);
    const c = client(app, await userToken(pair().stores, "rho-user"));
    const id = "edge-rho";
    expect((await c.patch(id, 0, readFileSync(join(inRepoCorpus, "edge/rho-style.jsonl")))).status).toBe(200);
    const { url } = (await (await c.post(`/v1/sessions/${id}/shares`, {})).json()) as { url: string };
    const path = new URL(url).pathname;
    const html = await (await app.request(path)).text();
    expect(html).toMatch(/class="notice notice-notice"/);
    expect(html).toMatch(/class="notice notice-error"/);
    expect(html).toContain('class="attachments"');
    expect(html).toContain("notes.txt");
    expect(html).toContain("/w/photo.png");
    const md = await (await app.request(`${path}/md`)).text();
    expect(md).toContain("**Notice:**");
    expect(md).toContain("**Error:**");
    expect(md).toContain("**Attachments**");
  });

  it("the title: the header's, then the latest title_change, in the list, the page and its Markdown", async () => {
    const app = makeApp(pair().stores);
    const c = client(app, await userToken(pair().stores, `titles-${name}`));
    const id = `titled-${name}`;
    const start = line({ ...sessionHeader(id, "/w"), title: "Titled by the host" }) + userLine("u1", null, 1, "hello");
    expect((await c.patch(id, 0, start)).status).toBe(200);
    const listed = async () =>
      ((await (await c.get("/v1/sessions")).json()) as { sessions: { id: string; name?: string }[] }).sessions.find(
        (s) => s.id === id,
      )?.name;
    expect(await listed()).toBe("Titled by the host");
    const renamed = line({
      type: "title_change",
      id: "t1",
      parentId: "u1",
      timestamp: "2026-01-01T00:00:09.000Z",
      title: "Renamed in omp",
      source: "user",
    });
    expect((await c.patch(id, Buffer.byteLength(start), renamed)).status).toBe(200);
    expect(await listed()).toBe("Renamed in omp");
    const { url } = (await (await c.post(`/v1/sessions/${id}/shares`, {})).json()) as { url: string };
    const path = new URL(url).pathname;
    expect(await (await app.request(path)).text()).toMatch(/<h1[^>]*>[^<]*Renamed in omp/);
    expect(await (await app.request(`${path}/md`)).text()).toContain("Renamed in omp");
  });
});
