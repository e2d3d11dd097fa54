/**
 * A session imported from a share (`pisync pull <link>` writes `pisyncImported` in the fork's
 * header: the lines that came with it) does not count the author's spending as the importer's,
 * on both stores: the imported lines' usage stays out of insights, what the importer adds after
 * them counts, whether the first push holds both or the imported lines come over several bodies.
 */
import { Tokens } from "@pisync/core";
import type { InsightsReport } from "@pisync/protocol";
import { assistantMessage, describeOnEveryStore, line, usage, userMessage } from "@pisync/testing";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client } from "./harness.js";

const at = (s: number) => `2026-04-02T10:00:${String(s).padStart(2, "0")}.000Z`;
const range = "from=2026-04-01&to=2026-04-30";

/** The author's lines: a question and a reply costing $1.50 (1,000 + 10 tokens). */
const AUTHORS = [
  line({ type: "message", id: "u1", parentId: null, timestamp: at(1), message: userMessage("why?") }),
  line({
    type: "message",
    id: "a1",
    parentId: "u1",
    timestamp: at(2),
    message: assistantMessage("because", { model: "authors-model", usage: usage(1000, 1.5, 10) }),
  }),
];
/** What the importer adds: a question and a reply costing $0.25. */
const OWN = [
  line({ type: "message", id: "u2", parentId: "a1", timestamp: at(3), message: userMessage("and then?") }),
  line({
    type: "message",
    id: "a2",
    parentId: "u2",
    timestamp: at(4),
    message: assistantMessage("then this", { model: "importers-model", usage: usage(100, 0.25, 5) }),
  }),
];

const header = (id: string, imported?: number) =>
  line({
    type: "session",
    version: 3,
    id,
    timestamp: at(0),
    cwd: "/home/bob/site",
    parentSession: "pisync-share:AAAAAAAAAAAAAAAAAAAAAA",
    ...(imported === undefined ? {} : { pisyncImported: imported }),
  });

describeOnEveryStore("an imported share's usage is not the importer's", (pair) => {
  let app: ReturnType<typeof createApp>;
  let tokens: Tokens;

  beforeAll(() => {
    app = createApp({ stores: pair().stores, log: () => {}, clock: () => new Date("2026-04-30T12:00:00.000Z") });
    tokens = new Tokens(pair().stores.meta);
  });

  /** A new user's client, and their report. */
  const user = async (name: string) => {
    const c = client(app, (await tokens.create(`${name}-${Math.random().toString(36).slice(2, 8)}`, "Laptop")).token);
    const report = async () => (await (await c.get(`/v1/insights?${range}`)).json()) as InsightsReport;
    return { c, report };
  };

  it("one push of the import and the importer's own turn: only the own turn counts", async () => {
    const { c, report } = await user("bob");
    const body = header("s-one", AUTHORS.length) + AUTHORS.join("") + OWN.join("");
    expect((await c.patch("s-one", 0, body)).status).toBe(200);
    const r = await report();
    expect(r.totals).toMatchObject({ cost: 0.25, tokens: 105, turns: 1, sessions: 1 });
    expect(r.byModel.map((m) => m.key)).toEqual(["anthropic/importers-model"]);
  });

  it("the import over several bodies, then the own turn in another: the mark holds across them", async () => {
    const { c, report } = await user("carol");
    const first = header("s-two", AUTHORS.length) + AUTHORS[0];
    expect((await c.patch("s-two", 0, first)).status).toBe(200);
    expect((await c.patch("s-two", Buffer.byteLength(first), AUTHORS[1])).status).toBe(200);
    expect((await report()).totals).toMatchObject({ cost: 0, tokens: 0, turns: 0, sessions: 0 });
    const offset = Buffer.byteLength(first + AUTHORS[1]);
    expect((await c.patch("s-two", offset, OWN.join(""))).status).toBe(200);
    expect((await report()).totals).toMatchObject({ cost: 0.25, tokens: 105, turns: 1, sessions: 1 });
    // The session's own facts still say what the conversation cost.
    const meta = (await (await c.get("/v1/sessions/s-two", { Accept: "application/json" })).json()) as Record<
      string,
      unknown
    >;
    expect(JSON.stringify(meta)).toContain('"cost":1.75');
  });

  it("without the mark every line counts, and a mark on the wrong kind of value is ignored", async () => {
    const { c, report } = await user("dave");
    expect((await c.patch("s-three", 0, header("s-three") + AUTHORS.join("") + OWN.join(""))).status).toBe(200);
    expect((await report()).totals).toMatchObject({ cost: 1.75, turns: 2 });
    const odd = line({ ...JSON.parse(header("s-four")), pisyncImported: "2" });
    expect((await c.patch("s-four", 0, odd + AUTHORS.join(""))).status).toBe(200);
    expect((await report()).totals).toMatchObject({ cost: 3.25, turns: 3 });
  });
});
