/**
 * The default leaf is the last entry with an id (rho's rule, seed of the format's docs): a value
 * without an id after it (a title slot, `{}`, junk) is on no branch. pi takes such a value as its
 * leaf and answers an empty context; this is the one place pisync answers otherwise.
 */
import { line, sessionHeader, userLine } from "@pisync/testing";
import { describe, expect, it } from "vitest";
import { buildSessionContext, parseSession } from "../src/index.js";

const assistant = (id: string, parentId: string) =>
  line({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:02.000Z",
    message: { role: "assistant", content: [{ type: "text", text: "answer" }], stopReason: "stop", timestamp: 2 },
  });

describe("the default leaf: the last entry with an id", () => {
  const start = line(sessionHeader("s1")) + userLine("a1", null, 1, "question") + assistant("a2", "a1");
  for (const [what, tail] of [
    ["a title slot line", line({ type: "title", v: 1, title: "Late title", pad: "   " })],
    ["an empty object", "{}\n"],
    ["a number", "42\n"],
    ["an entry whose id is not a string", line({ type: "custom", id: 7, parentId: "a2" })],
  ] as const) {
    it(`${what} as the last line is no leaf`, () => {
      const session = parseSession(start + tail);
      expect(session.leafId).toBe("a2");
      const context = buildSessionContext(session);
      expect(context.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
      // The same over an entry array as pi holds it.
      expect(buildSessionContext(session.entries).messages).toHaveLength(2);
      // Any leaf asked for by id is answered as before.
      expect(buildSessionContext(session, "a1").messages).toHaveLength(1);
    });
  }

  it("a file of entries without ids has no leaf: the empty context", () => {
    const session = parseSession(`${line(sessionHeader("s2"))}{}\n42\n`);
    expect(session.leafId).toBeNull();
    expect(buildSessionContext(session).messages).toEqual([]);
  });
});
