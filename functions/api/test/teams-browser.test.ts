/**
 * The team library in a real browser (Debian's chromium, driven by playwright-core) against
 * `npm start`'s server: make a team → an invite link to copy → the invited user opens it, sees
 * the team and joins → reads a team session in the share viewer, masked → searches the team →
 * the owner reads the audit log. Each user's browser sends that user's token.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tokens } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { line, userMessage } from "@pisync/testing";
import { freePort } from "@pisync/testing/servers";
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

const SECRET = "AKIAIOSFODNN7EXAMPLQ";

describe("the team library in a browser", () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  let dir: string;
  let memberToken: string;
  let outsiderToken: string;

  const api = (path: string, init: RequestInit = {}, token = server.token) =>
    fetch(`${server.url}${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  const as = (token: string): Promise<BrowserContext> =>
    browser.newContext({
      viewport: { width: 1200, height: 800 },
      extraHTTPHeaders: { Authorization: `Bearer ${token}` },
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pisync-teams-browser-"));
    server = await startNodeServer({ dataDir: dir, host: "127.0.0.1", port: await freePort(), log: () => {} });
    const stores = embeddedStores(dir);
    try {
      const tokens = new Tokens(stores.meta);
      memberToken = (await tokens.create("mia", "test")).token;
      outsiderToken = (await tokens.create("otto", "test")).token;
    } finally {
      stores.close();
    }
    const body =
      line({ type: "session", version: 3, id: "deploy", timestamp: "2026-03-01T08:00:00.000Z", cwd: "/srv/acme" }) +
      line({
        type: "message",
        id: "u1",
        parentId: null,
        timestamp: "2026-03-01T08:01:00.000Z",
        message: userMessage(`Deploy the heron service with key ${SECRET}`, 1),
      });
    const r = await api("/v1/sessions/deploy", { method: "PATCH", headers: { "Upload-Offset": "0" }, body });
    expect(r.status).toBe(200);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("invite → join → read a team session, masked → search the team → the audit log", async () => {
    const owner = await as(server.token);
    const ownerPage = await owner.newPage();
    await ownerPage.goto(`${server.url}/teams`);
    await ownerPage.fill('form.new-team input[name="name"]', "Acme <b>ops</b>");
    await Promise.all([ownerPage.waitForURL(/\/teams\/t[a-f0-9]{16}$/), ownerPage.click("form.new-team button")]);
    const teamUrl = ownerPage.url();
    const teamId = teamUrl.slice(teamUrl.lastIndexOf("/") + 1);
    // The name is text, not markup.
    await expect(ownerPage.locator("h1").textContent()).resolves.toBe("Acme <b>ops</b>");
    await Promise.all([ownerPage.waitForLoadState(), ownerPage.click("form.invite button")]);
    const invite = await ownerPage.inputValue("#invite-url");
    expect(invite).toMatch(new RegExp(`^${server.url}/join/pti_`));
    expect(
      (
        await api(`/v1/sessions/deploy/team`, {
          method: "PUT",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ team: teamId }),
        })
      ).status,
    ).toBe(200);

    const member = await as(memberToken);
    const page = await member.newPage();
    await page.goto(invite);
    await expect(page.locator("main").textContent()).resolves.toContain("Acme <b>ops</b>");
    await Promise.all([page.waitForURL(teamUrl), page.click("form.join button")]);
    // The link is spent: opening it again finds nothing.
    expect((await page.request.get(invite)).status()).toBe(404);

    await expect(page.locator("table.team-sessions").textContent()).resolves.toContain("Deploy the heron service");
    await Promise.all([page.waitForURL(/\/sessions\/local%3Adeploy$/), page.click("table.team-sessions a")]);
    const text = (await page.locator("main, body").first().textContent()) ?? "";
    expect(text).toContain("Deploy the heron service");
    expect(await page.content()).not.toContain(SECRET);

    // The team's search (indexed in the background).
    let hits = "";
    for (let i = 0; i < 100 && !hits.includes("deploy"); i++) {
      await page.goto(`${teamUrl}?q=heron`);
      hits = (await page.locator("ul.hits").count()) ? ((await page.locator("ul.hits").innerHTML()) ?? "") : "";
      if (!hits.includes("deploy")) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(hits).toContain("local%3Adeploy");
    expect(await page.content()).not.toContain(SECRET);
    // A member has no audit log; an outsider has no team.
    expect((await page.request.get(`${teamUrl}/audit`)).status()).toBe(403);
    const outsider = await as(outsiderToken);
    expect((await (await outsider.newPage()).request.get(teamUrl)).status()).toBe(404);

    // The team's insights: the owner sees the split by member, a member the totals only.
    await ownerPage.goto(`${server.url}/insights?team=${teamId}`);
    await expect(ownerPage.locator("h1").textContent()).resolves.toBe("Insights: Acme <b>ops</b>");
    expect(await ownerPage.locator("#member-h").count()).toBe(1);
    await page.goto(`${server.url}/insights?team=${teamId}`);
    expect(await page.locator("#member-h").count()).toBe(0);
    expect(await page.locator("#device-h").count()).toBe(0);
    expect((await (await outsider.newPage()).request.get(`${server.url}/insights?team=${teamId}`)).status()).toBe(404);

    await ownerPage.goto(`${teamUrl}/audit`);
    const actions = await ownerPage
      .locator("table.audit tr[data-action]")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-action")));
    expect(actions).toEqual(["member.joined", "session.added", "invite.created"]);
    await owner.close();
    await member.close();
    await outsider.close();
  }, 120_000);
});
