/** `pisync open` hands the opener only what has the shape of a sign-in link: the server's text never becomes a command. */
import { describe, expect, it } from "vitest";
import { CliError } from "../src/cli-error.js";
import { checkedLoginUrl } from "../src/commands/open.js";

const SECRET = `psl_${"a1B2-_".repeat(7)}x`;

describe("the sign-in link pisync open opens", () => {
  it("is taken as the server gave it when it is a sign-in link", () => {
    for (const url of [
      `https://pisync.example.com/login/${SECRET}`,
      `http://127.0.0.1:8080/login/${SECRET}`,
      `http://[::1]:8080/login/${SECRET}`,
    ]) {
      expect(checkedLoginUrl(url)).toBe(url);
    }
  });

  it("is refused when it could be read as a command, another scheme or an option", () => {
    for (const url of [
      `https://pisync.example.com/login/${SECRET}&calc.exe`,
      `https://pisync.example.com/login/${SECRET}|whoami`,
      `https://evil^.example/login/${SECRET}`,
      `file:///etc/passwd`,
      `--help`,
      `javascript:alert(1)`,
      `https://pisync.example.com/login/${SECRET}"`,
      `https://pisync.example.com/elsewhere`,
      42,
    ]) {
      expect(() => checkedLoginUrl(url), String(url)).toThrow(CliError);
    }
  });
});
