/**
 * Entries of a window as the page renders them: a tool call and its result are one block, and
 * the result's entry keeps its anchor (on that block), its label and its "edited later" mark
 * without a card of its own.
 */
import { describe, expect, it } from "vitest";
import { type PageEntry, renderEntries, renderPage, type SessionPageView } from "../src/index.js";
import { byClass, elements, elementText, textOf } from "./tools-html.js";

const call = (id: string, callId: string): PageEntry => ({
  id,
  type: "message",
  timestamp: "2026-01-01T09:00:00.000Z",
  entry: {
    type: "message",
    id,
    message: {
      role: "assistant",
      content: [{ type: "toolCall", id: callId, name: "bash", arguments: { command: "echo hi" } }],
    },
  },
});
const result = (id: string, callId: string, text = "hi"): PageEntry => ({
  id,
  type: "message",
  timestamp: "2026-01-01T09:00:01.000Z",
  entry: {
    type: "message",
    id,
    message: { role: "toolResult", toolCallId: callId, toolName: "bash", content: [{ type: "text", text }] },
  },
});

/** The element whose `id` attribute is `id`. */
const byId = (html: string, id: string) =>
  elements(html).filter((el) => el.attrs.some((a) => a.name === "id" && a.value === id));
const attr = (el: ReturnType<typeof elements>[number], name: string) => el.attrs.find((a) => a.name === name)?.value;

describe("a tool call and its result in one window", () => {
  it("is one block carrying the result's anchor, label and edit mark; the result has no card", () => {
    const html = renderEntries({
      entries: [call("a1", "c1"), result("t1", "c1", "hi <b>there</b>")],
      labels: new Map([["t1", "the <answer>"]]),
      edits: new Map([["t1", "ce1"]]),
    });
    expect(textOf(html)).not.toContain("The result of the tool call above");
    // #e-t1 lands on the block, inside the call's entry.
    const [anchor] = byId(html, "e-t1");
    expect(anchor).toBeDefined();
    expect(attr(anchor, "class")).toBe("paired-result");
    expect(byClass(html, "tool")).toHaveLength(1);
    expect(elementText(anchor)).toContain("echo hi");
    expect(elementText(anchor)).toContain("hi <b>there</b>");
    expect(byClass(html, "label").map(elementText)).toEqual(["the <answer>"]);
    expect(byClass(html, "edited").map((el) => attr(el, "href"))).toEqual(["#e-ce1"]);
    // The result's own entry stays as a hidden placeholder (live updates read the last entry's id).
    const placeholder = elements(html).filter((el) => el.tagName === "article" && attr(el, "data-id") === "t1");
    expect(placeholder).toHaveLength(1);
    expect(placeholder[0].attrs.some((a) => a.name === "hidden")).toBe(true);
    expect(attr(placeholder[0], "id")).toBeUndefined();
    expect(elementText(placeholder[0])).toBe("");
  });

  it("a result whose call is in another window is its own card, with its own anchor", () => {
    const html = renderEntries({ entries: [result("t1", "c1")], labels: new Map() });
    const [card] = byId(html, "e-t1");
    expect(card.tagName).toBe("article");
    expect(attr(card, "hidden")).toBeUndefined();
    expect(byClass(html, "tool")).toHaveLength(1);
    expect(byClass(html, "paired-result")).toHaveLength(0);
  });

  it("a call whose id is used twice gets the result once", () => {
    const html = renderEntries({
      entries: [call("a1", "c1"), call("a2", "c1"), result("t1", "c1")],
      labels: new Map(),
    });
    expect(byId(html, "e-t1")).toHaveLength(1);
    expect(byClass(html, "tool")).toHaveLength(2);
  });
});

describe("the page's title", () => {
  const view = (title: string): SessionPageView => ({
    base: "/s/t",
    facts: { title, models: [], messages: 0, toolCalls: 0, tokens: 0, cost: 0, totalsOf: "this branch" },
    entries: [],
    window: { start: 0, end: 0, total: 0 },
    leafId: null,
    branches: false,
    labels: new Map(),
    edits: new Map(),
    notes: [],
    live: false,
  });

  it("is the plain text of its Markdown (a pinned share's first message), in the heading and the tab", () => {
    const html = renderPage(view("Fix the `parseArgs` bug in **cli**, see [the docs](https://x.dev) <b>now</b>"));
    const [h1] = elements(html).filter((el) => el.tagName === "h1");
    expect(elementText(h1)).toBe("Fix the parseArgs bug in cli, see the docs <b>now</b>");
    const [title] = elements(html).filter((el) => el.tagName === "title");
    expect(elementText(title)).toBe("Fix the parseArgs bug in cli, see the docs <b>now</b> · pisync");
  });

  it("keeps a title with no Markdown as it is, backslashes and stray marks too", () => {
    const html = renderPage(view("a_b_c * 2 \\ `unclosed"));
    const [h1] = elements(html).filter((el) => el.tagName === "h1");
    expect(elementText(h1)).toBe("a_b_c * 2 \\ `unclosed");
  });
});
