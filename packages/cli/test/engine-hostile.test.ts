/**
 * The bundled `pisync` against hostile servers and hostile session text: an answer that never
 * ends and a gzip bomb are refused with a clear message while memory stays bounded (the child
 * reports its peak RSS; the server counts what it managed to send); names and cwd's from a
 * header never reach the terminal or the file system raw.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGzip } from "node:zlib";
import { buildCli, cliPath } from "@pisync/testing/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/log.js";
import { defaultRoots, piFileName, piFolderName } from "../src/paths.js";
import { isControl, safeJson, sanitize } from "../src/sanitize.js";

const MiB = 1024 * 1024;
let server: Server;
let url: string;
let work: string;
let preload: string;
/** Bytes the hostile server wrote before the client hung up. */
let written = 0;
let bomb: Buffer;

/** Writes 1 MiB chunks for as long as the client reads. */
function streamForever(res: ServerResponse): void {
  const chunk = Buffer.alloc(MiB, 0x61);
  res.writeHead(200, { "Content-Type": "application/x-ndjson" });
  const pump = () => {
    while (!res.destroyed && !res.writableEnded) {
      written += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
  };
  res.on("close", () => res.removeAllListeners("drain"));
  pump();
}

/** 512 MiB of zeros, gzipped (about 0.5 MB on the wire). */
async function gzipBomb(): Promise<Buffer> {
  const gzip = createGzip({ level: 1 });
  const parts: Buffer[] = [];
  gzip.on("data", (c: Buffer) => parts.push(c));
  const done = new Promise((resolve) => gzip.on("end", resolve));
  const zeros = Buffer.alloc(MiB);
  for (let i = 0; i < 512; i++) if (!gzip.write(zeros)) await new Promise((r) => gzip.once("drain", r));
  gzip.end();
  await done;
  return Buffer.concat(parts);
}

beforeAll(async () => {
  buildCli();
  work = mkdtempSync(join(tmpdir(), "pisync-hostile-"));
  // The child reports its peak resident memory (KiB) as it exits.
  preload = join(work, "maxrss.cjs");
  writeFileSync(
    preload,
    `process.on("exit", () => require("node:fs").writeSync(2, "\\nmaxrss=" + process.resourceUsage().maxRSS + "\\n"));\n`,
  );
  bomb = await gzipBomb();
  server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (/^\/v1\/sessions\/[^/]+$/.test(path)) {
      res.writeHead(200, { "Upload-Offset": "1000", ETag: '"1"', "Content-Type": "application/json" });
      return res.end(req.method === "HEAD" ? undefined : JSON.stringify({ generation: 1, bytes: 1000 }));
    }
    if (path === "/v1/sessions/forever/raw" || path.startsWith("/s/")) return streamForever(res);
    if (path === "/v1/sessions/bomb/raw") {
      res.writeHead(200, { "Content-Encoding": "gzip", "Content-Length": String(bomb.length) });
      return res.end(bomb);
    }
    res.writeHead(404).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address() as { port: number };
  url = `http://127.0.0.1:${address.port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  rmSync(work, { recursive: true, force: true });
});

/** Runs the bundled CLI (asynchronously: the hostile server lives in this process). */
function run(args: string[]): Promise<{ code: number | null; stderr: string; maxRssMiB: number }> {
  const home = mkdtempSync(join(work, "home-"));
  const child = spawn(process.execPath, ["--require", preload, cliPath, ...args], {
    env: {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      XDG_STATE_HOME: join(home, ".state"),
      PI_CODING_AGENT_DIR: join(home, ".pi", "agent"),
      PISYNC_ENDPOINT: url,
      PISYNC_TOKEN: `pst_${"a".repeat(43)}`,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c) => {
    stderr += c;
  });
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      const rss = Number(/maxrss=(\d+)/.exec(stderr)?.[1] ?? Number.NaN) / 1024;
      resolve({ code, stderr, maxRssMiB: rss });
    }),
  );
}

describe("a hostile server cannot exhaust memory", () => {
  it("pull ID: a raw answer that never ends is refused past the size the metadata gave", async () => {
    written = 0;
    const result = await run(["pull", "forever"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/larger than 8\.0 MiB: refused/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    // 1,000 bytes announced, 8 MiB of growth allowed; the rest is socket buffers.
    expect(written).toBeLessThan(40 * MiB);
    expect(result.maxRssMiB).toBeLessThan(200);
  }, 60_000);

  it("pull ID: a gzip bomb is refused once its output passes the limit", async () => {
    const result = await run(["pull", "bomb"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/larger than .* refused/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    // 512 MiB if inflated.
    expect(result.maxRssMiB).toBeLessThan(200);
  }, 60_000);

  it("pull LINK: a shared link that streams forever is refused at the default limit", async () => {
    written = 0;
    const result = await run(["pull", `${url}/s/AAAAAAAAAAAAAAAAAAAAAA.k1.x`]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/larger than 64\.0 MiB: refused/);
    expect(written).toBeLessThan(100 * MiB);
    expect(result.maxRssMiB).toBeLessThan(300);
  }, 60_000);
});

/** Whether text holds a character a terminal would act on. */
const hasControl = (text: string) => [...text].some((c) => isControl(c.charCodeAt(0)));

describe("hostile session text", () => {
  const hostileText = "\u001b]0;owned\u0007\u001b[2J\u009b31m";

  it("sanitize shows control characters instead of sending them", () => {
    expect(sanitize(`a${hostileText}b\nc`)).toBe("a\\x1b]0;owned\\x07\\x1b[2J\\x9b31mb\\x0ac");
    expect(sanitize("plain /home/dev/app — ok")).toBe("plain /home/dev/app — ok");
    const json = safeJson({ cwd: `x${hostileText}\u202ey` });
    expect(hasControl(json)).toBe(false);
    expect(JSON.parse(json)).toEqual({ cwd: `x${hostileText}\u202ey` });
  });

  it("watch logs escape what a session names, readable and JSON", () => {
    for (const json of [false, true]) {
      let out = "";
      createLogger(json, (line) => {
        out += line;
      }).event("synced", {
        path: `/s/${hostileText}.jsonl`,
        sessionId: `id${hostileText}`,
        note: `two words${hostileText}`,
      });
      expect(out.endsWith("\n")).toBe(true);
      expect(hasControl(out.slice(0, -1))).toBe(false);
      expect(out).toContain("\\u001b");
    }
  });

  it("the default roots include the sessionDir of pi 1.x's settings (absolute or ~), not a relative one", () => {
    const home = mkdtempSync(join(tmpdir(), "pisync-settings-"));
    try {
      const agent = join(home, ".pi", "agent");
      mkdirSync(agent, { recursive: true });
      const env = { HOME: home };
      const settings = (value: unknown) => writeFileSync(join(agent, "settings.json"), JSON.stringify(value));
      settings({ sessionDir: "~/elsewhere/sessions" });
      expect(defaultRoots(env)).toEqual([join(agent, "sessions"), join(home, "elsewhere", "sessions")]);
      settings({ sessionDir: "/srv/pi-sessions" });
      expect(defaultRoots(env)).toContain("/srv/pi-sessions");
      settings({ sessionDir: "relative/sessions" });
      expect(defaultRoots(env)).toEqual([join(agent, "sessions")]);
      writeFileSync(join(agent, "settings.json"), "{ not json");
      expect(defaultRoots(env)).toEqual([join(agent, "sessions")]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("folder and file names are pi 1.x's, one name each, never a path", () => {
    expect(piFolderName("/home/dev/app/")).toBe("--home-dev-app--");
    expect(piFolderName("/home/dev/./x/../app")).toBe("--home-dev-app--");
    expect(piFolderName("/home/dev/app")).toBe("--home-dev-app--");
    expect(piFolderName("C:\\Users\\dev\\app\\")).toBe("--C--Users-dev-app--");
    expect(hasControl(piFolderName(`/home/${hostileText}`))).toBe(false);
    expect(piFileName("2026-01-02T03:04:05.678Z", "abc")).toBe("2026-01-02T03-04-05-678Z_abc.jsonl");
    for (const hostile of ["2026/01/02", "../../../etc/passwd", `x${hostileText}`, "a\\b"]) {
      const name = piFileName(hostile, "../id");
      expect(name).not.toMatch(/[/\\]/);
      expect(hasControl(name)).toBe(false);
      expect(name.endsWith("_..-id.jsonl")).toBe(true);
    }
  });
});
