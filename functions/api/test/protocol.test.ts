/**
 * The append protocol's rules, on both store pairs: conflicts, retries, generations, bad
 * requests (each a precise 4xx that leaves bytes and length unchanged), tenancy, crashes
 * between the two store calls, and reads that stay cheap as a session grows.
 */
import { createHash } from "node:crypto";
import { deflateRawSync, gunzipSync, gzipSync } from "node:zlib";
import type { Stores } from "@pisync/store";
import { describeOnEveryStore } from "@pisync/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { client, countingBlobs, enc, failing, makeApp, userToken } from "./harness.js";

const header = (id: string) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
let counter = 0;
const line = (text: string, parentId: string | null = null) =>
  `${JSON.stringify({
    type: "message",
    id: `m${(++counter).toString(16).padStart(7, "0")}`,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: text, timestamp: 1 },
  })}\n`;

describeOnEveryStore("append protocol", (pair, name) => {
  let app: ReturnType<typeof makeApp>;
  let c: ReturnType<typeof client>;
  let sid = 0;
  const newId = () => `s-${name}-${++sid}`;

  beforeAll(async () => {
    app = makeApp(pair().stores, { maxRequestBytes: 64 * 1024, maxBodyBytes: 256 * 1024 });
    c = client(app, await userToken(pair().stores, "alice"));
  });

  /** Asserts the session holds exactly `expected`. */
  async function holds(id: string, expected: string) {
    const head = await c.head(id);
    expect(head.status).toBe(200);
    expect(head.headers.get("Upload-Offset")).toBe(String(enc(expected).length));
    expect(head.headers.get("ETag")).toMatch(/^"\d+"$/);
    expect(await head.text()).toBe("");
    expect(await (await c.get(`/v1/sessions/${id}/raw`)).text()).toBe(expected);
  }

  async function started(id = newId()) {
    const first = header(id) + line("hello");
    expect((await c.patch(id, 0, first)).status).toBe(200);
    return { id, first };
  }

  it("a wrong offset is a 409 carrying the committed length; nothing changes", async () => {
    const { id, first } = await started();
    const length = enc(first).length;
    for (const offset of [length + 5, length - 3, 0]) {
      const r = await c.patch(id, offset, line("late"));
      expect(r.status).toBe(409);
      expect(r.headers.get("Upload-Offset")).toBe(String(length));
      expect(await r.json()).toMatchObject({ offset: length });
    }
    await holds(id, first);
  });

  it("a retry of a committed append stores nothing and answers the new offset", async () => {
    const { id, first } = await started();
    const next = line("again");
    const offset = enc(first).length;
    const a = await c.patch(id, offset, next);
    const b = await c.patch(id, offset, next);
    expect(await a.json()).toMatchObject({ retry: false });
    expect(await b.json()).toMatchObject({ retry: true, offset: offset + enc(next).length });
    await holds(id, first + next);
  });

  it("of eight concurrent appends at one offset, exactly one wins", async () => {
    const { id, first } = await started();
    const offset = enc(first).length;
    const bodies = Array.from({ length: 8 }, (_, i) => line(`writer ${i}`));
    const results = await Promise.all(bodies.map((body) => c.patch(id, offset, body)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    const winner = bodies[results.findIndex((r) => r.status === 200)];
    await holds(id, first + winner);
  });

  it("If-Match names the generation: another one is a 412", async () => {
    const { id, first } = await started();
    const offset = enc(first).length;
    const r = await c.patch(id, offset, line("x"), { "If-Match": '"7"' });
    expect(r.status).toBe(412);
    expect(r.headers.get("ETag")).toBe('"1"');
    expect((await c.patch(id, offset, line("y"), { "If-Match": '"1"' })).status).toBe(200);
  });

  it("serves raw bytes whole, by range (206), and gzip-compressed when accepted", async () => {
    const { id, first } = await started();
    const bytes = enc(first);
    const part = await c.get(`/v1/sessions/${id}/raw`, { Range: "bytes=5-20" });
    expect(part.status).toBe(206);
    expect(part.headers.get("Content-Range")).toBe(`bytes 5-20/${bytes.length}`);
    expect([...new Uint8Array(await part.arrayBuffer())]).toEqual([...bytes.subarray(5, 21)]);
    const tail = await c.get(`/v1/sessions/${id}/raw`, { Range: "bytes=-10" });
    expect([...new Uint8Array(await tail.arrayBuffer())]).toEqual([...bytes.subarray(bytes.length - 10)]);
    expect((await c.get(`/v1/sessions/${id}/raw`, { Range: `bytes=${bytes.length}-` })).status).toBe(416);
    const gz = await c.get(`/v1/sessions/${id}/raw`, { "Accept-Encoding": "gzip" });
    expect(gz.headers.get("Content-Encoding")).toBe("gzip");
    expect(gunzipSync(Buffer.from(await gz.arrayBuffer())).toString()).toBe(first);
  });

  it("PUT starts a new generation; the old one stays readable", async () => {
    const { id, first } = await started();
    const rewritten = `${header(id)}${line("rewritten")}`;
    const r = await c.put(id, rewritten);
    expect(r.status).toBe(200);
    expect(r.headers.get("ETag")).toBe('"2"');
    await holds(id, rewritten);
    expect(await (await c.get(`/v1/sessions/${id}/raw?generation=1`)).text()).toBe(first);
    const generations = (await (await c.get(`/v1/sessions/${id}/generations`)).json()) as {
      generations: { generation: number }[];
    };
    expect(generations.generations.map((g) => g.generation)).toEqual([1, 2]);
    // A retried PUT finds its own generation.
    const again = await c.put(id, rewritten);
    expect(await again.json()).toMatchObject({ retry: true, generation: 2 });
  });

  it("keeps every complete line verbatim, even those pi cannot read, and reports them", async () => {
    const { id, first } = await started();
    const broken = `null\n{"type":"message","id":"t1","parentId":null,"timestamp":"2{"type":"message"}\n`;
    const bad = new Uint8Array([
      ...enc('{"type":"custom","id":"b1","parentId":null,"timestamp":"x","data":"'),
      0xe2,
      0x82,
      ...enc('"}\n'),
    ]);
    const offset = enc(first).length;
    const r = await c.patch(id, offset, broken);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { problems: { kind: string }[] };
    expect(body.problems.map((p) => p.kind)).toEqual(["not-an-entry", "torn-line"]);
    const r2 = await c.patch(id, offset + enc(broken).length, bad);
    expect(r2.status).toBe(200);
    const raw = new Uint8Array(await (await c.get(`/v1/sessions/${id}/raw`)).arrayBuffer());
    expect([...raw]).toEqual([...enc(first + broken), ...bad]);
    const meta = (await (await c.get(`/v1/sessions/${id}`)).json()) as { problemCount: number };
    expect(meta.problemCount).toBe(2);
  });

  it("appends deflated against the committed bytes as dictionary, checked by the body's hash", async () => {
    const { id, first } = await started();
    const committed = enc(first);
    const next = enc(line("a line that shares keys with the ones before it"));
    const dict = (bytes: Uint8Array) => ({
      "Content-Encoding": "pisync-deflate-dict",
      "Pisync-Body-SHA256": createHash("sha256").update(next).digest("hex"),
      _body: deflateRawSync(next, { dictionary: bytes }),
    });
    const send = (d: ReturnType<typeof dict>, extra: Record<string, string> = {}) => {
      const { _body, ...headers } = d;
      return c.patch(id, committed.length, _body, { ...headers, ...extra });
    };
    // A client whose idea of the committed bytes is wrong (the deflate stream refers to them):
    // refused, nothing stored.
    const wrong = await send(dict(enc(new TextDecoder().decode(next).replaceAll("e", "E").repeat(3))));
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toMatch(/committed bytes/);
    await holds(id, first);
    const noHash = await send(dict(committed), { "Pisync-Body-SHA256": "" });
    expect(noHash.status).toBe(400);
    await holds(id, first);
    const ok = await send(dict(committed.subarray(Math.max(0, committed.length - 32 * 1024))));
    expect(ok.status, await ok.clone().text()).toBe(200);
    await holds(id, first + new TextDecoder().decode(next));
  });

  describe("bad requests: a precise 4xx, and nothing stored", () => {
    const cases: [string, number, RegExp, (id: string, offset: number) => Response | Promise<Response>][] = [
      ["a body without its final newline", 400, /newline/, (id, o) => c.patch(id, o, '{"type":"label"')],
      ["an empty body", 400, /empty/, (id, o) => c.patch(id, o, "")],
      ["no Upload-Offset", 400, /Upload-Offset/, (id) => c.patch(id, undefined, line("x"))],
      [
        "a malformed Upload-Offset",
        400,
        /Upload-Offset/,
        (id) => c.patch(id, undefined, line("x"), { "Upload-Offset": "-1" }),
      ],
      [
        "a fractional Upload-Offset",
        400,
        /Upload-Offset/,
        (id) => c.patch(id, undefined, line("x"), { "Upload-Offset": "1.5" }),
      ],
      ["bad gzip", 400, /gzip/, (id, o) => c.patch(id, o, enc("not gzip at all\n"), { "Content-Encoding": "gzip" })],
      [
        "an unknown Content-Encoding",
        400,
        /Content-Encoding/,
        (id, o) => c.patch(id, o, line("x"), { "Content-Encoding": "br" }),
      ],
      ["a body over the request limit", 413, /limit/, (id, o) => c.patch(id, o, `${"x".repeat(70 * 1024)}\n`)],
      [
        "a dictionary-deflate bomb",
        413,
        /decompressed/,
        (id, o) =>
          c.patch(id, o, deflateRawSync(new Uint8Array(8 * 1024 * 1024)), {
            "Content-Encoding": "pisync-deflate-dict",
            "Pisync-Body-SHA256": "0".repeat(64),
          }),
      ],
      [
        "a gzip bomb",
        413,
        /decompressed/,
        (id, o) => c.patch(id, o, gzipSync(new Uint8Array(8 * 1024 * 1024)), { "Content-Encoding": "gzip" }),
      ],
      ["a malformed If-Match", 400, /If-Match/, (id, o) => c.patch(id, o, line("x"), { "If-Match": "abc" })],
      [
        "a header at offset 0 of a new generation naming another session",
        400,
        /header's id/,
        (id) => c.put(id, header("other")),
      ],
    ];
    it.each(cases)("%s → %i", async (_what, status, message, send) => {
      const { id, first } = await started();
      const r = await send(id, enc(first).length);
      expect(r.status).toBe(status);
      expect(((await r.json()) as { error: string }).error).toMatch(message);
      await holds(id, first);
    });

    it("offset 0 must start with the session header, whose id is the session's", async () => {
      const id = newId();
      for (const body of [line("no header"), header("someone-else"), "\n\n"]) {
        const r = await c.patch(id, 0, body);
        expect(r.status).toBe(400);
      }
      expect((await c.head(id)).status).toBe(404);
    });

    it("a session id outside the safe set", async () => {
      for (const id of ["bad%20id", "-starts-with-dash", "x".repeat(225), "a..b%2Fc"]) {
        const r = await c.patch(id, 0, header(id));
        expect(r.status, id).toBe(400);
        expect(((await r.json()) as { error: string }).error).toMatch(/session id must be/);
      }
      // A dot-segment never reaches a session route at all.
      expect((await c.patch("%2E%2E", 0, header(".."))).status).toBe(404);
    });

    it("a custom session id as long as pi can save (224 characters) works on every route", async () => {
      // pi 1.x's --session-id allows any length; 224 is the longest its file name can hold.
      const id = `${name}-${"custom.session_id-".repeat(13).slice(0, 222 - name.length)}z`;
      expect(id).toHaveLength(224);
      const { first } = await started(id);
      await holds(id, first);
      expect((await c.get(`/v1/sessions/${id}/context`)).status).toBe(200);
      expect((await c.get(`/v1/sessions/${id}/tree`)).status).toBe(200);
      const listed = (await (await c.get("/v1/sessions?limit=100")).json()) as { sessions: { id: string }[] };
      expect(listed.sessions.map((s) => s.id)).toContain(id);
      expect((await c.delete(`/v1/sessions/${id}`)).status).toBe(204);
      expect((await c.head(id)).status).toBe(404);
    });

    it("query parameters are validated", async () => {
      const { id } = await started();
      expect((await c.get("/v1/sessions?limit=abc")).status).toBe(400);
      expect((await c.get(`/v1/sessions/${id}/raw?generation=x`)).status).toBe(400);
      expect((await c.get(`/v1/sessions/${id}/context?leaf=nope`)).status).toBe(404);
    });
  });

  describe("tenancy", () => {
    it("another user's token sees nothing: every route answers as for a missing session", async () => {
      const { id, first } = await started();
      const bob = client(app, await userToken(pair().stores, "bob"));
      expect((await bob.head(id)).status).toBe(404);
      for (const path of ["", "/raw", "/tree", "/context", "/generations"]) {
        const r = await bob.get(`/v1/sessions/${id}${path}`);
        expect(r.status, path).toBe(404);
        expect(await r.json()).toEqual({ error: "no such session", code: "not_found" });
      }
      expect((await bob.patch(id, enc(first).length, line("intruder"))).status).toBe(404);
      expect((await bob.delete(`/v1/sessions/${id}`)).status).toBe(404);
      const list = (await (await bob.get("/v1/sessions")).json()) as { sessions: unknown[] };
      expect(list.sessions).toEqual([]);
      await holds(id, first);
    });

    it("no token, or an unknown one, is a 401", async () => {
      expect((await app.request("/v1/sessions")).status).toBe(401);
      const r = await app.request("/v1/sessions", { headers: { Authorization: `Bearer pst_${"A".repeat(43)}` } });
      expect(r.status).toBe(401);
      expect(r.headers.get("WWW-Authenticate")).toContain("Bearer");
      expect((await app.request("/healthz")).status).toBe(200);
    });
  });

  describe("crash safety: the head's commit is the commit point", () => {
    /** Appends through stores where one call fails: `status` and the old state; then the retry lands. */
    async function crashThenRetry(withFailure: (fail: () => boolean) => Stores, status: 500 | 503) {
      const { id, first } = await started();
      let fail = true;
      const crashing = client(makeApp(withFailure(() => fail)), await userToken(pair().stores, "alice"));
      const next = line("after crash");
      const offset = enc(first).length;
      const failed = await crashing.patch(id, offset, next);
      expect(failed.status).toBe(status);
      if (status === 503) expect(await failed.json()).toMatchObject({ code: "storage_unavailable" });
      await holds(id, first);
      fail = false;
      expect((await crashing.patch(id, offset, next)).status).toBe(200);
      await holds(id, first + next);
    }

    // A commit's failure may hide an applied commit: the head is read, the commit sent again, then 503.
    it("a commit that keeps failing before it applies leaves the old state (503); the retry succeeds", () =>
      crashThenRetry(
        (fail) => ({ blobs: pair().stores.blobs, meta: failing(pair().stores.meta, "commit", fail) }),
        503,
      ));

    it("a failure storing the bytes leaves the old state; the retry succeeds", () =>
      crashThenRetry((fail) => ({ blobs: failing(pair().stores.blobs, "put", fail), meta: pair().stores.meta }), 500));
  });

  it("large lines go through an upload, then an append commits them", async () => {
    const { id, first } = await started();
    const big = line(`data:image/png;base64,${"A".repeat(200 * 1024)}`);
    const offset = enc(first).length;
    const upload = await ticket(c, id, big);
    expect((await putUpload(c, upload, big)).ok).toBe(true);
    const r = await c.patch(id, offset, "", { "Pisync-Upload": upload.uploadId });
    expect(r.status, await r.clone().text()).toBe(200);
    await holds(id, first + big);
    // Taken by its append: gone, ticket and bytes.
    expect(await pair().stores.blobs.list("uploads/alice/")).toEqual([]);
  });

  /** A ticket for `bytes` (its length and SHA-256, or the ones given). */
  async function ticket(who: ReturnType<typeof client>, id: string, bytes: string, declared: object = {}) {
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const created = await who.post(`/v1/sessions/${id}/uploads`, { length: enc(bytes).length, sha256, ...declared });
    expect(created.status, await created.clone().text()).toBe(201);
    return (await created.json()) as { uploadId: string; url: string; authorization: boolean };
  }

  /** PUTs an upload's bytes where its ticket says: the API (with the token), or S3 presigned (without). */
  function putUpload(who: ReturnType<typeof client>, upload: { url: string; authorization: boolean }, body: string) {
    return upload.authorization
      ? app.request(upload.url, { method: "PUT", headers: who.auth, body })
      : fetch(upload.url, { method: "PUT", body });
  }

  it("uploads need a ticket of their user, and its declared length and SHA-256", async () => {
    const { id, first } = await started();
    const offset = enc(first).length;
    const big = line("B".repeat(100 * 1024));
    const bob = client(app, await userToken(pair().stores, "bob"));
    // No ticket: refused, nothing kept (the embedded store's PUT; S3 takes only presigned URLs).
    const ticketless = await app.request(`/v1/uploads/${"a".repeat(32)}`, {
      method: "PUT",
      headers: c.auth,
      body: big,
    });
    expect(ticketless.status).toBe(404);
    expect((await ticketless.json()).code).toBe("not_found");
    // Another hash declared: the bytes are refused (embedded) or refused when taken (S3), never appended.
    const lying = await ticket(c, id, big, { sha256: "0".repeat(64) });
    const put = await putUpload(c, lying, big);
    if (lying.authorization) {
      expect(put.status).toBe(400);
      expect((await put.json()).code).toBe("upload_mismatch");
    }
    const taken = await c.patch(id, offset, "", { "Pisync-Upload": lying.uploadId });
    expect(taken.status).toBe(lying.authorization ? 404 : 400);
    expect((await taken.json()).code).toBe(lying.authorization ? "not_found" : "upload_mismatch");
    await holds(id, first);
    // Another length: refused by the API (413 past it, 400 short of it) or by S3's signed length.
    const short = await ticket(c, id, big);
    const shortPut = await putUpload(c, short, big.slice(1));
    expect(shortPut.ok).toBe(false);
    if (short.authorization) expect((await shortPut.json()).code).toBe("upload_mismatch");
    expect(await pair().stores.blobs.list(`uploads/alice/${short.uploadId}`)).not.toContain(
      `uploads/alice/${short.uploadId}`,
    );
    // Another user's ticket can neither be filled nor appended; the owner's still works.
    const mine = await ticket(c, id, big);
    if (mine.authorization) expect((await putUpload(bob, mine, big)).status).toBe(404);
    expect((await putUpload(c, mine, big)).ok).toBe(true);
    const theirs = await bob.patch(id, offset, "", { "Pisync-Upload": mine.uploadId });
    expect(theirs.status).toBe(404);
    const bobs = await bob.patch(`${id}-bob`, 0, "", { "Pisync-Upload": mine.uploadId });
    expect(bobs.status).toBe(404);
    expect((await c.patch(id, offset, "", { "Pisync-Upload": mine.uploadId })).status).toBe(200);
    await holds(id, first + big);
  });

  it("DELETE removes every object and item of the session", async () => {
    const { id } = await started();
    expect((await c.delete(`/v1/sessions/${id}`)).status).toBe(204);
    expect((await c.head(id)).status).toBe(404);
    const users = await pair().stores.blobs.list(`sessions/alice/${id}/`);
    expect(users).toEqual([]);
  });

  it("a DELETE raced by the session made again under its id removes the first one's objects only", async () => {
    const { id } = await started();
    const { stores } = pair();
    // The deleting server: the head is gone, then another device makes the session again
    // (answered 200: that device will not send those bytes again), then the objects go.
    let madeAgain: Response | undefined;
    const again = header(id) + line("made again");
    const meta = Object.create(stores.meta) as typeof stores.meta;
    meta.deleteSession = async (...args) => {
      await stores.meta.deleteSession(...args);
      madeAgain = await c.patch(id, 0, again);
    };
    const deleting = client(makeApp({ ...stores, meta }), await userToken(stores, "alice"));
    expect((await deleting.delete(`/v1/sessions/${id}`)).status).toBe(204);
    expect(madeAgain?.status).toBe(200);
    await holds(id, again);
  });

  // Over HTTP and the real stores, 500 appends (merges happen every few appends); the
  // 10,000-append version of this property is core's (packages/core/test/append.test.ts).
  it("after many single-line appends, raw and context cost at most 10 GETs", async () => {
    const appends = 500;
    const id = newId();
    const blobs = countingBlobs(pair().stores.blobs);
    const counted = client(makeApp({ blobs, meta: pair().stores.meta }), await userToken(pair().stores, "alice"));
    let body = header(id);
    let offset = 0;
    let parent: string | null = null;
    let expected = "";
    for (let i = 0; i < appends; i++) {
      const next = body + line(`line ${i}`, parent);
      parent = `m${counter.toString(16).padStart(7, "0")}`;
      const r = await counted.patch(id, offset, next);
      expect(r.status).toBe(200);
      offset += enc(next).length;
      expected += next;
      body = "";
    }
    blobs.gets = 0;
    const raw = await counted.get(`/v1/sessions/${id}/raw`);
    expect(await raw.text()).toBe(expected);
    expect(blobs.gets).toBeLessThanOrEqual(10);
    blobs.gets = 0;
    const context = (await (await counted.get(`/v1/sessions/${id}/context`)).json()) as { messages: unknown[] };
    expect(context.messages).toHaveLength(appends);
    expect(blobs.gets).toBeLessThanOrEqual(10);
  }, 60_000);
});
