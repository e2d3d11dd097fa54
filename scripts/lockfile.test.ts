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

describe("better-sqlite3", () => {
  it("is installed only where node:sqlite cannot serve: through an optional package whose engines Node 22.16 and later (but 23) do not meet", () => {
    const lock = JSON.parse(readFileSync(new URL("../package-lock.json", import.meta.url), "utf8")) as {
      packages: Record<
        string,
        { optional?: boolean; engines?: Record<string, string>; dependencies?: Record<string, string> }
      >;
    };
    // npm skips an optional package whose engines this Node does not meet, and with it what only
    // it depends on: on Node 22.16 and later (23 aside, its node:sqlite lacks `isTransaction`),
    // nothing of better-sqlite3 is fetched or built.
    const holder = lock.packages["packages/store/node20-sqlite"];
    expect(holder).toMatchObject({ optional: true, engines: { node: "<22.16 || ^23" } });
    expect(Object.keys(holder?.dependencies ?? {})).toEqual(["better-sqlite3"]);
    expect(lock.packages["node_modules/better-sqlite3"]?.optional).toBe(true);
    // Nothing else asks for it: any other path to it would install it on every Node.
    const askers = Object.entries(lock.packages).filter(([, entry]) => {
      const all = entry as { dependencies?: object; devDependencies?: object; optionalDependencies?: object };
      return [all.dependencies, all.devDependencies, all.optionalDependencies].some(
        (deps) => deps && "better-sqlite3" in deps,
      );
    });
    expect(askers.map(([path]) => path)).toEqual(["packages/store/node20-sqlite"]);
  });
});
