/**
 * The tree oracle: pi (1.6.0, and 0.73.1) opens a file with two branches, the shape a merge
 * makes (common prefix, one machine's lines, then the other's), and answers its tree, default
 * leaf and each leaf's context.
 */
import { describe, expect, it } from "vitest";
import { type Op, type PiVersion, piTree, piWrite } from "../src/pi1/pi1.js";

const program: Op[] = [
  { kind: "user", text: "Plan the feature", as: "u1" },
  { kind: "assistant", text: "Plan A or B.", model: 0, as: "a1" },
  { kind: "user", text: "Try A", as: "u2" },
  { kind: "assistant", text: "A done.", model: 0, as: "a2" },
  { kind: "branch", ref: "a1" },
  { kind: "user", text: "Try B", as: "u3" },
  { kind: "assistant", text: "B done.", model: 1, as: "a3" },
];

const lines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; id: string; parentId?: string | null });

describe.each(["1.6.0", "0.73.1"] as PiVersion[])("pi %s's tree of a two-branch file", (pi) => {
  it("answers both branches, the last line as leaf, and each leaf's context", () => {
    const [written] = piWrite([program], { persist: true, pi });
    const [, u1, a1, u2, a2, u3, a3] = lines(written.text);
    const [tree] = piTree([{ text: written.text, leaves: [a2.id, a3.id, null] }], { pi });

    expect(tree.roots).toEqual([u1.id]);
    // Pre-order: A's branch (first in file order) before B's.
    expect(tree.nodes.map((n) => n.id)).toEqual([u1.id, a1.id, u2.id, a2.id, u3.id, a3.id]);
    const byId = new Map(tree.nodes.map((n) => [n.id, n]));
    expect(byId.get(a1.id)).toEqual({ id: a1.id, parentId: u1.id, type: "message", children: [u2.id, u3.id] });
    expect(byId.get(u3.id)?.parentId).toBe(a1.id);
    expect(byId.get(a2.id)?.children).toEqual([]);
    expect(byId.get(a3.id)?.children).toEqual([]);
    expect(tree.leafId).toBe(a3.id);

    const [[leafA, contextA], [leafB, contextB], [leafDefault, contextDefault]] = tree.contexts;
    expect([leafA, leafB, leafDefault]).toEqual([a2.id, a3.id, null]);
    const texts = (context: unknown) =>
      (context as { messages: { content: string | { text: string }[] }[] }).messages.map((m) =>
        typeof m.content === "string" ? m.content : m.content.map((c) => c.text).join(""),
      );
    expect(texts(contextA)).toEqual(["Plan the feature", "Plan A or B.", "Try A", "A done."]);
    expect(texts(contextB)).toEqual(["Plan the feature", "Plan A or B.", "Try B", "B done."]);
    expect(contextDefault).toEqual(contextB);
  });
});
