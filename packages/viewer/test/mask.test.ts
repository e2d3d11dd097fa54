/**
 * Credential masking: every shape of the corpus in every placement is masked in place (the
 * line stays valid JSON with the same ids, no 12 consecutive characters of the secret remain),
 * disable directives in session content are ignored, broken lines are masked too, and hostile
 * inputs cost work bounded by their length (windows of bounded size).
 */

import { credentialShapes, leaks, PLACEMENTS, pathologicalTexts } from "@pisync/testing/hostile";
import { describe, expect, it } from "vitest";
import { Keywords } from "../src/mask/keywords.js";
import { RULES, ruleFindings } from "../src/mask/rules.js";
import { findCredentials, OVERLAP, WINDOW, windowsOf } from "../src/mask/scan.js";
import { secretlintFindings } from "../src/mask/secretlint.js";
import { SETTING_RULE_IDS } from "../src/mask/settings.js";
import { maskJsonLine, maskLines, maskText, maskTexts } from "../src/mask.js";

const shapes = credentialShapes();
const GITHUB = shapes.find((s) => s.rule === "github-token")?.secret as string;
const NPM = shapes.find((s) => s.rule === "npm-token")?.secret as string;

describe("the rule set", () => {
  it.each(shapes.map((s) => [s.rule, s.text.slice(0, 40), s] as const))("%s finds %j", (rule, _, shape) => {
    const found = [...ruleFindings(shape.text), ...secretlintFindings(shape.text)];
    expect(found.map((f) => f.rule)).toContain(rule);
    expect(leaks(maskText(shape.text).text, shape.secret)).toEqual([]);
  });

  it("every rule pisync adds has a shape in the corpus", () => {
    const tested = new Set(shapes.map((s) => s.rule));
    expect([...RULES.map((r) => r.id), ...SETTING_RULE_IDS].filter((id) => !tested.has(id))).toEqual([]);
  });

  it("masks an AWS secret key whole, not from the start of its name", () => {
    const secret = shapes.find((s) => s.rule === "aws-secret-access-key") as (typeof shapes)[number];
    const masked = maskText(`export ${secret.text}`).text;
    expect(masked).toBe(`export ${secret.text.replace(secret.secret, "[masked: aws-secret-access-key]")}`);
  });

  it("masks an AWS account id alone, its key kept, and the same id elsewhere in the text", () => {
    const json = '{\n  "AccountId": "123456789012",\n  "Arn": "arn:aws:iam::123456789012:user/alice"\n}';
    expect(maskText(json).text).toBe(
      '{\n  "AccountId": "[masked: aws-account-id]",\n  "Arn": "arn:aws:iam::[masked: aws-account-id]:user/alice"\n}',
    );
    const env = "aws_account_id = 123456789012\narn:aws:iam::123456789012:role/x";
    expect(maskText(env).text).toBe(
      "aws_account_id = [masked: aws-account-id]\narn:aws:iam::[masked: aws-account-id]:role/x",
    );
    // A longer number that holds the digits is another number: left alone.
    expect(maskText("aws_account_id = 123456789012 order 91234567890123").text).toBe(
      "aws_account_id = [masked: aws-account-id] order 91234567890123",
    );
  });

  it("leaves ordinary text alone", () => {
    for (const text of [
      "const token = await getToken(session);",
      "password: string;",
      "PWD=/home/dev/app\nOLDPWD=/home/dev",
      "max_tokens: 4096, tokenizer: cl100k_base",
      "export GITHUB_TOKEN=$(gh auth token)",
      "https://github.com/owner/repo/blob/main/README.md#secrets",
      "see https://user@example.com:8080/path",
      "password = process.env.DB_PASSWORD",
      "the parser passing: id=0e4cfa07 ms=4",
      "the session token: Listener migrated",
      "keyboard: 12345678abc",
      "the bearer of this letter; basic functionality",
      'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    ]) {
      expect(maskText(text)).toEqual({ text, count: 0 });
    }
  });
});

describe("masking a line", () => {
  for (const placement of PLACEMENTS) {
    if (!placement.entry) continue;
    const make = placement.entry;
    it(`masks every shape in ${placement.name}, in place`, () => {
      for (const shape of shapes) {
        const original: Record<string, unknown> = {
          ...make(shape.text),
          id: "abc12345",
          parentId: "def67890",
          timestamp: "2026-01-01T00:00:00.000Z",
        };
        const { text, count } = maskJsonLine(JSON.stringify(original));
        expect(count, shape.text).toBeGreaterThanOrEqual(1);
        expect(leaks(text, shape.secret), `${shape.rule} in ${placement.name}`).toEqual([]);
        const masked = JSON.parse(text) as Record<string, unknown>;
        expect(masked.id).toBe("abc12345");
        expect(masked.parentId).toBe("def67890");
        expect(masked.type).toBe(original.type);
        expect(masked.timestamp).toBe(original.timestamp);
        expect(text).toContain("[masked: ");
      }
    });
  }

  it("keeps the rest of an entry with two credentials, byte for byte outside them", () => {
    const line = JSON.stringify({
      type: "message",
      id: "a1",
      parentId: null,
      message: { role: "user", content: `first ${GITHUB} then ${NPM}, and the question?`, timestamp: 1 },
    });
    const { text, count } = maskJsonLine(line);
    expect(count).toBe(2);
    expect(JSON.parse(text).message.content).toBe(
      "first [masked: github-token] then [masked: npm-token], and the question?",
    );
    expect(text.replace(/first .*question\?/, "")).toBe(line.replace(/first .*question\?/, ""));
  });

  it("leaves a line without credentials exactly as it was (spacing, escapes, numbers)", () => {
    const line = '{ "type" : "message", "id":"x", "n": 1.50, "t": "caf\\u00e9 \\"quoted\\" \\n", "a": [true, null] }';
    expect(maskJsonLine(line)).toEqual({ text: line, count: 0 });
  });

  it("masks object keys too, and never the ids that hold the tree together", () => {
    const line = JSON.stringify({ type: "custom", id: "k1", parentId: "k0", data: { [GITHUB]: 1 } });
    const masked = JSON.parse(maskJsonLine(line).text);
    expect(Object.keys(masked.data)).toEqual(["[masked: github-token]"]);
    expect([masked.id, masked.parentId]).toEqual(["k1", "k0"]);
  });

  it("ignores disable directives anywhere in the session", async () => {
    const lines = [
      JSON.stringify({
        type: "message",
        id: "r",
        parentId: null,
        message: { role: "toolResult", content: "<!-- secretlint-disable -->" },
      }),
      JSON.stringify({
        type: "message",
        id: "s",
        parentId: "r",
        message: { role: "user", content: `${GITHUB} // secretlint-disable-line` },
      }),
      JSON.stringify({
        type: "message",
        id: "t",
        parentId: "s",
        message: { role: "user", content: `# secretlint-disable-next-line\n${NPM}` },
      }),
    ];
    const { lines: out, count } = await maskLines(lines);
    expect(count).toBe(2);
    expect(leaks(out.join("\n"), GITHUB)).toEqual([]);
    expect(leaks(out.join("\n"), NPM)).toEqual([]);
    expect(out.map((l) => JSON.parse(l).id)).toEqual(["r", "s", "t"]);
  });

  it("masks lines that are not valid JSON without making them longer than needed", () => {
    const broken = [
      `{"type":"message","id":"x","message":{"content":"torn after ${GITHUB} and`, // torn mid-string
      `{"type":"message","id":"x","message":{"content":"torn in an escape \\n${GITHUB}\\`,
      `plain text ${GITHUB} outside any string`,
      `{"type":"message","id":"x", bad ${GITHUB}, "text": "\\n${NPM}"}`,
      `\uFEFF{"type":"session","id":"s","cwd":"/srv/${GITHUB}"}`,
      `{"a": "bad escape \\q ${NPM}"}`,
    ];
    for (const line of broken) {
      const { text, count } = maskJsonLine(line);
      expect(count, line).toBeGreaterThanOrEqual(1);
      expect(leaks(text, GITHUB), line).toEqual([]);
      expect(leaks(text, NPM), line).toEqual([]);
    }
    expect(maskJsonLine('{"torn": "no secret here').text).toBe('{"torn": "no secret here');
  });

  it("masks a valid JSON value that is not an object", () => {
    const { text } = maskJsonLine(JSON.stringify(`bare ${GITHUB}`));
    expect(JSON.parse(text)).toBe("bare [masked: github-token]");
  });
});

describe("keywords", () => {
  it("finds keywords that lie inside others, and says which lists hold them", () => {
    const keywords = new Keywords([["sk-"], ["sk-ant-"], ["ghp_"], ["AKIA", "ASIA"]]);
    expect(keywords.present("key sk-ant-api03-x")).toEqual([true, true, false, false]);
    expect(keywords.present("ASIA and ghp_")).toEqual([false, false, true, true]);
    expect(keywords.present("nothing here")).toEqual([false, false, false, false]);
  });
});

describe("plain texts", () => {
  it("masks titles, folders, previews and labels", async () => {
    expect(await maskTexts([`use ${GITHUB}`, "/srv/app", `key ${NPM}`])).toEqual([
      "use [masked: github-token]",
      "/srv/app",
      "key [masked: npm-token]",
    ]);
  });
});

describe("bounded work", () => {
  it("scans long texts in bounded windows that overlap by more than any credential", () => {
    expect(windowsOf(10)).toEqual([[0, 10]]);
    const length = 5 * WINDOW + 123;
    const windows = windowsOf(length);
    expect(windows[0][0]).toBe(0);
    expect(windows[windows.length - 1][1]).toBe(length);
    for (let i = 0; i < windows.length; i++) {
      expect(windows[i][1] - windows[i][0]).toBeLessThanOrEqual(WINDOW);
      if (i > 0) expect(windows[i - 1][1] - windows[i][0]).toBe(OVERLAP);
    }
    const longest = Math.max(...shapes.map((s) => s.text.length));
    expect(longest).toBeLessThan(OVERLAP);
  });

  it("finds credentials that straddle a window boundary", () => {
    const key = shapes.find((s) => s.rule === "private-key") as (typeof shapes)[number];
    for (const shape of [key, ...shapes.filter((s) => s.rule === "github-token")]) {
      for (const at of [WINDOW - 10, WINDOW - OVERLAP - 5, 2 * (WINDOW - OVERLAP) - shape.text.length / 2]) {
        const text = `${"x ".repeat(Math.floor(at / 2))}${shape.text} ${"y ".repeat(WINDOW)}`;
        expect(leaks(maskText(text).text, shape.secret)).toEqual([]);
      }
    }
  });

  it("masks hostile inputs (runs that many rules start on) and keeps the line valid", () => {
    const hostile = Object.values(pathologicalTexts(1 << 19));
    for (const text of hostile) {
      const line = JSON.stringify({ type: "message", id: "h", parentId: "g", text: `${text} ${GITHUB}` });
      const masked = maskJsonLine(line);
      const parsed = JSON.parse(masked.text);
      expect([parsed.id, parsed.parentId]).toEqual(["h", "g"]);
      expect(leaks(masked.text.slice(-200), GITHUB)).toEqual([]);
    }
  });

  it("masks a deeply nested line without recursion", () => {
    const line = `${"[".repeat(20000)}"${GITHUB}"${"]".repeat(20000)}`;
    const masked = maskJsonLine(line);
    expect(masked.count).toBe(1);
    expect(masked.text.length).toBe(line.length - GITHUB.length + "[masked: github-token]".length);
  });

  it("finds nothing in texts shorter than any credential", () => {
    expect(findCredentials("ghp_")).toEqual([]);
  });
});
