/** One line per event on stderr: readable by default, JSON with `--json`; control characters escaped. */
import { safeJson, sanitize } from "./sanitize.js";

export interface Logger {
  event(type: string, fields: Record<string, unknown>): void;
}

export function createLogger(
  json: boolean,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  return {
    event(type, fields) {
      if (json) {
        write(`${safeJson({ time: new Date().toISOString(), event: type, ...fields })}\n`);
        return;
      }
      const parts = Object.entries(fields)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${typeof v === "string" && !/\s/.test(v) ? sanitize(v) : safeJson(v)}`);
      write(`${type} ${parts.join(" ")}\n`);
    },
  };
}
