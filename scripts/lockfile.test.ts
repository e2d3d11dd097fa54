import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * `npm ci` refuses a lock file that leaves out any optional dependency, even one for another
 * platform that would never be installed here. A registry that lacks some platform builds makes
 * `npm install` drop them silently, so this checks what `npm ci` will check, before CI does.
 */
describe("package-lock.json", () => {
  it("lists every optional dependency of every locked package", () => {
    const lock = JSON.parse(readFileSync(new URL("../package-lock.json", import.meta.url), "utf8")) as {
      packages: Record<string, { optionalDependencies?: Record<string, string> }>;
    };
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        // npm resolves a dependency from the nearest node_modules upward, as Node does.
        const candidates: string[] = [];
        let base = path;
        for (;;) {
          candidates.push(`${base ? `${base}/` : ""}node_modules/${name}`);
          const at = base.lastIndexOf("node_modules/");
          if (at < 0) break;
          base = base.slice(0, at).replace(/\/$/, "");
        }
        candidates.push(`node_modules/${name}`);
        if (!candidates.some((c) => c in lock.packages)) missing.push(`${name} (for ${path || "root"})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
