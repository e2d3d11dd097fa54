/**
 * Realistic pi lines for the fault suite's writers: turns of a coding session (a user prompt,
 * an assistant reply with thinking and a tool call, the tool's result), built with the test
 * factories, every entry id unique in the run so that a duplicated line can be found.
 */
import { assistantMessage, entry, line, sessionHeader, usage, userMessage } from "@pisync/testing";

/** A small seeded generator (mulberry32): a run can be repeated. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "the session file append offset retry segment commit head bytes line tool read write edit bash grep test build fix error value function module import export return const await async".split(
    " ",
  );

/** `n` characters or so of words (and, now and then, characters JSON must escape). */
function prose(random: () => number, n: number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < n) {
    const roll = random();
    const word =
      roll < 0.02
        ? 'quote " and \\ backslash'
        : roll < 0.04
          ? "naïve — ünïcödé ✓"
          : WORDS[Math.floor(roll * WORDS.length)];
    parts.push(word as string);
    length += (word as string).length + 1;
  }
  return parts.join(" ");
}

/** Writes the lines of one writer: ids `<writer>-<n>` in hex, parents chained per session. */
export class LineMaker {
  private next = 0;
  private readonly random: () => number;

  constructor(
    private readonly writer: number,
    seed: number,
  ) {
    this.random = seeded(seed * 7919 + writer);
  }

  private id(): string {
    return `${this.writer.toString(16).padStart(2, "0")}${(this.next++).toString(16).padStart(6, "0")}`;
  }

  /** The header line of a new session. */
  header(sessionId: string): string {
    return line(sessionHeader(sessionId, `/home/dev/project-${this.writer}`));
  }

  /**
   * One append's body: one to three complete lines of a turn, after `parent` (the session's
   * last entry id, or null). Answers the body and the id of its last entry.
   */
  turn(parent: string | null): { body: string; last: string } {
    const at = Math.floor(this.random() * 60);
    const kind = this.random();
    const lines: string[] = [];
    const add = (value: object) => {
      const id = this.id();
      lines.push(line(entry(id, parent, at, value)));
      parent = id;
    };
    if (kind < 0.3) add(userMessage(prose(this.random, 40 + this.random() * 400), at));
    const callId = `call_${this.id()}`;
    add(
      assistantMessage(
        [
          { type: "thinking", thinking: prose(this.random, 100 + this.random() * 1500) },
          { type: "text", text: prose(this.random, 50 + this.random() * 800) },
          { type: "toolCall", id: callId, name: "bash", arguments: { command: "npm test -- --run" } },
        ],
        { timestamp: at, usage: usage(1000 + Math.floor(this.random() * 5000), 0.01, 200) },
      ),
    );
    if (kind > 0.4) {
      // Now and then a long tool output, as test logs are.
      const size = this.random() < 0.1 ? 20_000 : 200 + this.random() * 3000;
      add({
        role: "toolResult",
        toolCallId: callId,
        toolName: "bash",
        content: [{ type: "text", text: prose(this.random, size) }],
        isError: false,
        timestamp: at,
      });
    }
    return { body: lines.join(""), last: parent as string };
  }
}
