/**
 * The wire contract (`@pisync/protocol`) against the app: the OpenAPI document names every
 * route the app registers (and nothing it does not), every error answer is `{ error, code }`
 * with the code clients decide on, and answers have the contract's shapes.
 */
import { createHash } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { newShareKeys } from "@pisync/core";
import {
  AppendResponse,
  CreatedToken,
  ErrorBody,
  type ErrorCode,
  GenerationList,
  SessionList,
  SessionMeta,
  ShareList,
  ShareView,
  TokenList,
  UploadTicket,
} from "@pisync/protocol";
import { ROUTES } from "@pisync/protocol/routes";
import { openPair, type Pair } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as z from "zod/mini";
import { createApp } from "../src/index.js";
import { openApiDocument, openApiPath } from "../src/openapi.js";
import { client, enc, failing, userToken } from "./harness.js";

const header = (id: string) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
const line = (id: string, text: string) =>
  `${JSON.stringify({
    type: "message",
    id,
    parentId: null,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: text, timestamp: 1 },
  })}\n`;

/** Asserts `r` is an error answer with `status` and `code`; returns its body. */
async function refused(r: Response, status: number, code: ErrorCode): Promise<ErrorBody> {
  const body = ErrorBody.parse(await r.json());
  expect({ status: r.status, code: body.code }, body.error).toEqual({ status, code });
  return body;
}

describe("the OpenAPI document", () => {
  // With search and teams on, as `npm start` runs it: every route the server can register.
  const app = createApp({
    stores: { teams: {} } as never,
    search: { index: {} as never, indexer: {} as never },
    log: () => {},
  });
  const registered = app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`);
  const documented = Object.entries(openApiDocument.paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((method) => `${method} ${path}`),
  );

  it("describes every route the app registers", () => {
    expect(registered.length).toBeGreaterThan(20);
    expect(registered.filter((r) => !documented.includes(r))).toEqual([]);
  });

  it("describes no route the app does not have (HEAD is answered by GET)", () => {
    const served = new Set(registered);
    const extra = documented.filter(
      (r) => !served.has(r) && !(r.startsWith("head ") && served.has(`get ${r.slice(5)}`)),
    );
    expect(extra).toEqual([]);
  });

  it("carries the contract's patterns, bodies and error codes", () => {
    const patch = openApiDocument.paths["/v1/sessions/{id}"].patch as {
      parameters: { name: string; schema: { pattern?: string } }[];
      responses: Record<string, { description: string }>;
    };
    expect(patch.parameters.find((p) => p.name === "id")?.schema.pattern).toBe("^[A-Za-z0-9][A-Za-z0-9._-]{0,223}$");
    expect(patch.parameters.map((p) => p.name)).toContain("Upload-Offset");
    expect(patch.responses["400"].description).toContain("dictionary_mismatch");
    const share = openApiDocument.paths["/v1/sessions/{id}/shares"].post as {
      requestBody: { content: { "application/json": { schema: { properties: Record<string, unknown> } } } };
    };
    expect(Object.keys(share.requestBody.content["application/json"].schema.properties)).toEqual([
      "leafId",
      "expiresIn",
      "maskSecrets",
    ]);
    expect(ROUTES.map((r) => r.path)).toContain("/s/:token/raw");
  });
});

describe("codes and shapes over HTTP (embedded)", () => {
  let pair: Pair;
  let app: ReturnType<typeof createApp>;
  let c: ReturnType<typeof client>;
  beforeAll(async () => {
    pair = await openPair("embedded");
    const keys = newShareKeys();
    app = createApp({ stores: pair.stores, shareKeys: async () => keys, maxShareDays: 30, log: () => {} });
    c = client(app, await userToken(pair.stores, "alice"));
  });
  afterAll(() => pair.close());

  it("answers the append protocol's refusals with their codes", async () => {
    const first = header("c1") + line("a1", "hi");
    AppendResponse.parse(await (await c.patch("c1", 0, first)).json());
    const at = enc(first).length;
    await refused(await c.patch("c1", undefined, line("a2", "x")), 400, "invalid_offset");
    await refused(await c.patch("c1", at, line("a2", "x"), { "If-Match": "three" }), 400, "invalid_if_match");
    await refused(await c.patch("c1", at, "no newline"), 400, "incomplete_line");
    await refused(await c.patch("c1", at, ""), 400, "empty_body");
    await refused(await c.patch("c!", 0, header("c!")), 400, "invalid_session_id");
    await refused(await c.patch("c1", at, line("a2", "x"), { "Content-Encoding": "br" }), 400, "unsupported_encoding");
    await refused(await c.patch("c1", at, "not gzip\n", { "Content-Encoding": "gzip" }), 400, "bad_gzip");
    const conflict = await refused(await c.patch("c1", 3, line("a2", "x")), 409, "offset_conflict");
    expect(conflict).toMatchObject({ offset: at, generation: 1 });
    const mismatch = await refused(
      await c.patch("c1", at, line("a2", "x"), { "If-Match": '"7"' }),
      412,
      "generation_mismatch",
    );
    expect(mismatch).toMatchObject({ offset: at, generation: 1 });
    await refused(await c.patch("c1", at, line("a2", "x"), { "Pisync-Upload": "nope" }), 400, "invalid_upload_id");
    await refused(await c.patch("c1", at, line("a2", "x"), { "Pisync-Upload": "a".repeat(32) }), 404, "not_found");
  });

  it("names a dictionary that is not the committed bytes, and a body without its hash", async () => {
    const first = header("d1") + line("b1", "hello");
    await c.patch("d1", 0, first);
    const at = enc(first).length;
    const body = enc(line("b2", "again"));
    // Back-references into these bytes land elsewhere in the committed ones.
    const wrongDictionary = deflateRawSync(body, {
      dictionary: Buffer.from(`${"x".repeat(300)}${line("b2", "again")}`),
    });
    const sha = createHash("sha256").update(body).digest("hex");
    const dict = { "Content-Encoding": "pisync-deflate-dict" };
    await refused(
      await c.patch("d1", at, wrongDictionary, { ...dict, "Pisync-Body-SHA256": sha }),
      400,
      "dictionary_mismatch",
    );
    await refused(await c.patch("d1", at, wrongDictionary, dict), 400, "missing_body_hash");
    const right = deflateRawSync(body, { dictionary: Buffer.from(first) });
    const ok = await c.patch("d1", at, right, { ...dict, "Pisync-Body-SHA256": sha });
    expect(AppendResponse.parse(await ok.json()).offset).toBe(at + body.length);
  });

  it("a dictionary append past a missing session is a conflict at 0, but a failed head read is no conflict", async () => {
    const body = enc(line("e2", "x"));
    const request = (target: typeof app) =>
      target.request("/v1/sessions/e1", {
        method: "PATCH",
        headers: {
          ...c.auth,
          "Upload-Offset": "100",
          "Content-Encoding": "pisync-deflate-dict",
          "Pisync-Body-SHA256": createHash("sha256").update(body).digest("hex"),
        },
        body: deflateRawSync(body) as Uint8Array<ArrayBuffer>,
      });
    expect(await refused(await request(app), 409, "offset_conflict")).toMatchObject({ offset: 0, generation: 0 });
    const broken = createApp({
      stores: { ...pair.stores, meta: failing(pair.stores.meta, "getHead", () => true) },
      log: () => {},
    });
    // The token check does not read heads: the failure reaches the dictionary lookup only.
    const r = await request(broken);
    expect(r.status).toBe(500);
    expect(await r.json()).toEqual({ error: "internal error", code: "internal" });
  });

  it("answers other refusals with their codes", async () => {
    await refused(await app.request("/v1/sessions"), 401, "unauthorized");
    await refused(await c.get("/v1/nothing-here"), 404, "route_not_found");
    await refused(await c.get("/v1/sessions/missing"), 404, "not_found");
    await refused(await c.get("/v1/sessions?limit=x"), 400, "bad_query");
    await refused(await c.post("/v1/tokens", { name: "" }), 400, "bad_body");
    const notJson = await app.request("/v1/tokens", { method: "POST", headers: c.auth, body: "{" });
    await refused(notJson, 400, "bad_json");
    await refused(await c.get("/v1/blobs/XYZ"), 400, "invalid_blob_name");
    await refused(await c.get(`/v1/blobs/${"0".repeat(64)}`), 404, "not_found");
    const put = await app.request(`/v1/blobs/${"0".repeat(64)}`, { method: "PUT", headers: c.auth, body: "abc" });
    await refused(put, 400, "blob_hash_mismatch");
    await refused(
      await c.post("/v1/sessions/u1/uploads", { length: 1e12, sha256: "0".repeat(64) }),
      400,
      "upload_too_large",
    );
    await refused(await c.post("/v1/sessions/u1/uploads", { length: 10 }), 400, "bad_body");
    const upload = await app.request("/v1/uploads/nope", { method: "PUT", headers: c.auth, body: "x\n" });
    await refused(upload, 400, "invalid_upload_id");
  });

  it("says the longest share life as a number, not only in words", async () => {
    await c.patch("f1", 0, header("f1") + line("f1a", "share me"));
    const body = await refused(
      await c.post("/v1/sessions/f1/shares", { expiresIn: 31 * 86400 }),
      400,
      "expiry_out_of_range",
    );
    expect(body.maxSeconds).toBe(30 * 86400);
    await refused(await c.post("/v1/sessions/f1/shares", { leafId: "nope" }), 404, "not_found");
    const share = ShareView.parse(await (await c.post("/v1/sessions/f1/shares", { expiresIn: 60 })).json());
    expect(share.status).toBe("active");
    await refused(await app.request(`/s/${share.url.split("/s/")[1]}x/raw`), 404, "not_found");
    expect(await c.delete(`/v1/shares/${share.id}`)).toMatchObject({ status: 204 });
    await refused(await app.request(`/s/${share.url.split("/s/")[1]}/raw`), 410, "gone");
  });

  it("answers with the contract's shapes", async () => {
    await c.patch("g1", 0, header("g1") + line("g1a", "shape"));
    const parse = async <T extends z.ZodMiniType>(schema: T, r: Response) => schema.parse(await r.json());
    expect((await parse(SessionList, await c.get("/v1/sessions"))).sessions.length).toBeGreaterThan(0);
    expect((await parse(SessionMeta, await c.get("/v1/sessions/g1"))).id).toBe("g1");
    expect((await parse(GenerationList, await c.get("/v1/sessions/g1/generations"))).generations).toHaveLength(1);
    expect((await parse(ShareList, await c.get("/v1/shares"))).shares).toBeInstanceOf(Array);
    expect((await parse(TokenList, await c.get("/v1/tokens"))).tokens.length).toBeGreaterThan(0);
    expect((await parse(CreatedToken, await c.post("/v1/tokens", { name: "laptop" }))).token).toMatch(/^pst_/);
    const ticket = await parse(
      UploadTicket,
      await c.post("/v1/sessions/g1/uploads", { length: 10, sha256: "0".repeat(64) }),
    );
    expect(ticket.authorization).toBe(true);
  });
});
