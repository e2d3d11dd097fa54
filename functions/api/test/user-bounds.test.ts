/**
 * What one user may hold, whatever their credentials, on both store pairs: live tokens (minting
 * past the bound is 429 `too_many_tokens` until one is revoked), one request budget shared by
 * all of a user's tokens, open uploads and the bytes they declare (429 `too_many_uploads`), and
 * upload bodies stored as sent (a compressed one is 415 `upload_encoding`, nothing kept).
 */
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { USER_LIMITS } from "@pisync/protocol";
import { describeOnEveryStore } from "@pisync/testing";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { client, makeApp, userToken } from "./harness.js";

describeOnEveryStore("per-user bounds", (pair, name) => {
  let app: ReturnType<typeof makeApp>;
  beforeAll(() => {
    app = makeApp(pair().stores);
  });
  const user = (suffix: string) => `${suffix}-${name}`;

  /** POST /v1/tokens with `token`: the answer. */
  const mint = (token: string, n: number) =>
    app.request("/v1/tokens", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: `minted ${n}` }),
    });

  it("minting past the live tokens' bound answers 429 too_many_tokens; revoking one makes room", async () => {
    const first = await userToken(pair().stores, user("minter"));
    // The first token counts: 49 more are taken.
    const made: { id: string; token: string }[] = [];
    for (let i = 1; i < USER_LIMITS.liveTokens; i++) {
      const r = await mint(first, i);
      expect(r.status, await r.clone().text()).toBe(201);
      made.push((await r.json()) as { id: string; token: string });
    }
    for (const token of [first, made[10].token]) {
      const refused = await mint(token, 99);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({ code: "too_many_tokens", maxTokens: USER_LIMITS.liveTokens });
    }
    const listed = await app.request("/v1/tokens", { headers: { Authorization: `Bearer ${first}` } });
    expect(((await listed.json()) as { tokens: unknown[] }).tokens).toHaveLength(USER_LIMITS.liveTokens);
    // Another user is not bound by this one's tokens.
    expect((await mint(await userToken(pair().stores, user("other")), 1)).status).toBe(201);
    // Revoked: room for one more.
    const revoke = await app.request(`/v1/tokens/${made[0].id}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${first}` },
    });
    expect(revoke.status).toBe(204);
    expect((await mint(first, 100)).status).toBe(201);
    expect((await mint(first, 101)).status).toBe(429);
  });

  it("all of a user's tokens share one request budget beside each token's own", async () => {
    const limited = createApp({
      stores: pair().stores,
      log: () => {},
      rateLimits: {
        limits: { perIp: 1000, perToken: 20, perUser: 30, perLink: 5, windowMs: 60_000 },
        clientIp: () => "127.0.0.1",
      },
    });
    const first = await userToken(pair().stores, user("spender"));
    const tokens = [
      first,
      await userToken(pair().stores, user("spender")),
      await userToken(pair().stores, user("spender")),
    ];
    const other = await userToken(pair().stores, user("neighbour"));
    const get = (token: string) =>
      limited.request("/v1/sessions?limit=1", { headers: { Authorization: `Bearer ${token}` } });
    // 10 each from three tokens: under each token's 20, the user's 30 spent.
    for (let i = 0; i < 30; i++) expect((await get(tokens[i % 3])).status).toBe(200);
    for (const token of tokens) {
      const r = await get(token);
      expect(r.status).toBe(429);
      expect(await r.json()).toMatchObject({ code: "rate_limited" });
    }
    // A token minted now shares the spent budget; another user does not.
    expect((await get(await userToken(pair().stores, user("spender")))).status).toBe(429);
    expect((await get(other)).status).toBe(200);
  });

  /** A ticket for `length` bytes of `sha256` by `token`: the answer. */
  const ticket = (token: string, length: number, sha256 = "0".repeat(64), session = "big") =>
    app.request(`/v1/sessions/${session}/uploads`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ length, sha256 }),
    });

  it("a compressed upload body is refused (415 upload_encoding): 8 KB of gzip never stores 4 MiB", async () => {
    const token = await userToken(pair().stores, user("zipper"));
    const zeros = Buffer.alloc(4 * 1024 * 1024);
    const sha256 = createHash("sha256").update(zeros).digest("hex");
    const made = await ticket(token, zeros.length, sha256);
    expect(made.status).toBe(201);
    const { uploadId } = (await made.json()) as { uploadId: string };
    const gzipped = gzipSync(zeros);
    expect(gzipped.length).toBeLessThan(8 * 1024);
    for (const encoding of ["gzip", "GZip ", "deflate", "br"]) {
      const put = await app.request(`/v1/uploads/${uploadId}`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${token}`, "Content-Encoding": encoding },
        body: gzipped,
      });
      expect(put.status).toBe(415);
      expect(await put.json()).toMatchObject({ code: "upload_encoding" });
    }
    // Nothing kept but the ticket.
    expect(await pair().stores.blobs.list(`uploads/${user("zipper")}/`)).toEqual([
      `uploads/${user("zipper")}/${uploadId}.ticket`,
    ]);
  });

  it("open uploads are bounded per user, in number and in declared bytes (429 too_many_uploads)", async () => {
    const token = await userToken(pair().stores, user("uploader"));
    // The bytes: four tickets of a quarter each fill them; one more byte is refused.
    const quarter = USER_LIMITS.openUploadBytes / 4;
    for (let i = 0; i < 4; i++) expect((await ticket(token, quarter)).status).toBe(201);
    const overBytes = await ticket(token, 1);
    expect(overBytes.status).toBe(429);
    expect(Number(overBytes.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await overBytes.json()).toMatchObject({
      code: "too_many_uploads",
      maxUploads: USER_LIMITS.openUploads,
      maxUploadBytes: USER_LIMITS.openUploadBytes,
    });
    // The number: another user fills theirs with small tickets.
    const other = await userToken(pair().stores, user("uploader-2"));
    for (let i = 0; i < USER_LIMITS.openUploads; i++) expect((await ticket(other, 10)).status).toBe(201);
    expect((await ticket(other, 10)).status).toBe(429);
    // A ticket taken by its append frees its place.
    const line = `${"x".repeat(100)}\n`;
    const third = await userToken(pair().stores, user("uploader-3"));
    const t = client(app, third);
    const header = `${JSON.stringify({ type: "session", version: 3, id: "freed", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
    expect((await t.patch("freed", 0, header)).status).toBe(200);
    const sha = createHash("sha256").update(line).digest("hex");
    let last = "";
    for (let i = 0; i < USER_LIMITS.openUploads; i++) {
      const r = await ticket(third, line.length, sha, "freed");
      expect(r.status).toBe(201);
      last = ((await r.json()) as { uploadId: string; url: string; authorization: boolean }).uploadId;
    }
    expect((await ticket(third, line.length, sha, "freed")).status).toBe(429);
    const put = await app.request(`/v1/uploads/${last}`, { method: "PUT", headers: t.auth, body: line });
    expect(put.status).toBe(204);
    const appended = await t.patch("freed", Buffer.byteLength(header), "", { "Pisync-Upload": last });
    expect(appended.status, await appended.clone().text()).toBe(200);
    expect((await ticket(third, line.length, sha, "freed")).status).toBe(201);
  });
});
