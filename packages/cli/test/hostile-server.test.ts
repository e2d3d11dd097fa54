/**
 * pisync against a hostile server: every string field of every answer carries terminal escapes
 * (a window title, colours, a backspace, a carriage return, DEL, the C1 CSI U+009B, bidi
 * overrides), and numbers come as strings. No command prints one raw, in its human output or
 * its `--json` (escaped there, still valid JSON holding the same text: nothing dropped). A
 * server that trickles a byte every few hundred ms cannot hold a command past its deadline.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Io } from "../src/commands/common.js";
import { main } from "../src/main.js";
import { isControl } from "../src/sanitize.js";

/** Everything a terminal would obey. */
const EVIL = "\x1b]0;pwned\x07\x1b[31mred\b\r\x7fdel\x9b31m\u202eevil\u2066";
const ID = "0196a1b2-0000-7000-8000-000000000001";

/** An answer's every string field set to EVIL (numbers as hostile strings too). */
const session = {
  id: ID,
  updatedAt: EVIL,
  entries: EVIL,
  bytes: EVIL,
  cost: EVIL,
  cwd: EVIL,
  name: EVIL,
  firstMessage: EVIL,
};
const share = {
  id: EVIL,
  sessionId: EVIL,
  leafId: EVIL,
  url: `https://x/s/${EVIL}`,
  createdAt: EVIL,
  expiresAt: EVIL,
  status: EVIL,
  revokedAt: EVIL,
  maskSecrets: true,
  views: EVIL,
  downloads: EVIL,
};
const sums = {
  input: 1,
  output: 1,
  cacheRead: 0,
  cacheWrite: 0,
  tokens: 2,
  cost: 0.5,
  ms: 60_000,
  turns: 1,
  sessions: 1,
};
const group = { key: EVIL, label: EVIL, ...sums };
const ANSWERS: Record<string, unknown> = {
  "/v1/insights": {
    from: EVIL,
    to: EVIL,
    uncounted: EVIL,
    totals: sums,
    ...Object.fromEntries(["byDay", "byWeek", "byModel", "byProject", "byDevice"].map((k) => [k, [group]])),
    byTool: [{ tool: EVIL, calls: 1, ms: 1, sessions: 1 }],
    topSessions: [{ sessionId: EVIL, title: EVIL, cwd: EVIL }],
  },
  "/v1/sessions": { sessions: [session] },
  [`/v1/sessions/${ID}/generations`]: {
    generations: [{ generation: EVIL, bytes: EVIL, lines: EVIL, createdAt: EVIL, reason: EVIL }],
  },
  "/v1/shares": { shares: [share] },
  [`/v1/sessions/${ID}/shares`]: share,
  "/v1/search": {
    sessions: [
      {
        sessionId: EVIL,
        name: EVIL,
        cwd: EVIL,
        entries: [{ entryId: EVIL, kind: EVIL, time: 1, snippet: [{ text: EVIL, hit: true }] }],
      },
    ],
  },
};

let server: Server;
let url: string;
let home: string;
/** Bytes the trickling answer sent before the client gave up. */
let trickled = 0;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "pisync-hostile-server-"));
  server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path.startsWith("/trickle/")) {
      res.writeHead(200, { "Content-Type": "application/json" });
      const timer = setInterval(() => {
        trickled++;
        res.write(" ");
      }, 300);
      res.on("close", () => clearInterval(timer));
      return;
    }
    if (path === "/v1/sessions/refused/generations") {
      res.writeHead(400, { "Content-Type": "application/json" });
      return res.end(JSON.stringify({ error: EVIL, code: "bad_request" }));
    }
    const answer = ANSWERS[path];
    res.writeHead(answer ? (req.method === "POST" ? 201 : 200) : 404, { "Content-Type": "application/json" });
    res.end(JSON.stringify(answer ?? { error: EVIL }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(home, { recursive: true, force: true });
});

/** Runs pisync in this process against `endpoint`; what it printed. */
async function run(args: string[], endpoint = url, env: NodeJS.ProcessEnv = {}) {
  let out = "";
  let err = "";
  const io: Io = {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    env: {
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      XDG_STATE_HOME: join(home, ".state"),
      PISYNC_ENDPOINT: endpoint,
      PISYNC_TOKEN: `pst_${"a".repeat(43)}`,
      ...env,
    },
    isTTY: false,
  };
  const code = await main(args, io);
  return { code, out, err };
}

/** The characters of `text` a terminal would obey (newlines are fine). */
function controls(text: string): string[] {
  return [...text].filter((c) => c !== "\n" && isControl(c.charCodeAt(0))).map((c) => c.charCodeAt(0).toString(16));
}

const COMMANDS: string[][] = [
  ["ls"],
  ["generations", ID],
  ["generations", "refused"],
  ["shares"],
  ["search", "anything"],
  ["share", ID],
  ["insights"],
  ["insights", "--by", "tool"],
  ["nothing-of-the-kind"],
];

describe("a hostile server's words", () => {
  it.each(COMMANDS)("pisync %s prints none of them raw", async (...args) => {
    const { out, err } = await run(args);
    expect(controls(out)).toEqual([]);
    expect(controls(err)).toEqual([]);
    expect(`${out}${err}`.length).toBeGreaterThan(0);
  });

  it("the human output shows them escaped, not dropped", async () => {
    const listed = await run(["ls"]);
    expect(listed.out).toContain("\\x1b]0;pwned\\x07\\x1b[31mred\\x08\\x0d\\x7fdel\\x9b31m\\u202eevil\\u2066");
    const generations = await run(["generations", ID]);
    expect(generations.out).toContain("\\x1b]0;pwned");
    expect(generations.out).toContain("\\x9b31m");
    const refused = await run(["generations", "refused"]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("\\x1b]0;pwned");
  });

  it.each(COMMANDS.filter(([c]) => c !== "nothing-of-the-kind"))(
    "pisync %s --json is valid JSON with the same text, escaped",
    async (...args) => {
      const { out, err, code } = await run([...args, "--json"]);
      expect(controls(out)).toEqual([]);
      expect(controls(err)).toEqual([]);
      if (code !== 0) return; // a refusal prints no document
      expect(out).toContain("\\u001b]0;pwned\\u0007");
      expect(out).toContain("\\u007fdel\\u009b31m\\u202eevil\\u2066");
      expect(JSON.stringify(JSON.parse(out))).toContain(JSON.stringify(EVIL).slice(1, -1));
    },
  );
});

describe("a server that trickles", () => {
  it("cannot hold pisync ls past PISYNC_TIMEOUT, nor past --timeout", async () => {
    for (const [args, env] of [
      [["ls"], { PISYNC_TIMEOUT: "1.5" }],
      [["ls", "--timeout", "1.5"], {}],
    ] as const) {
      const started = Date.now();
      const { code, err } = await run([...args], `${url}/trickle`, env);
      const seconds = (Date.now() - started) / 1000;
      expect(code).toBe(1);
      expect(err).toContain("no complete answer within 1.5 s");
      expect(seconds).toBeGreaterThanOrEqual(1.4);
      expect(seconds).toBeLessThan(6);
    }
    expect(trickled).toBeGreaterThan(2); // it did keep sending: the idle timeout alone would wait on
  }, 30_000);

  it("a malformed --timeout is a usage error naming it", async () => {
    const { code, err } = await run(["ls", "--timeout", "soon"]);
    expect(code).toBe(2);
    expect(err).toContain("--timeout");
  });
});
