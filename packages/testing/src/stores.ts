/**
 * The two store pairs every storage-touching test runs on: `embedded` (files + SQLite in a
 * temporary folder) and `aws` (S3 + DynamoDB on the test servers, a fresh table each time).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Stores } from "@pisync/store";
import { embeddedStores } from "@pisync/store/embedded";
import { afterAll, beforeAll, describe } from "vitest";
import { testAwsStores } from "./aws.js";

/** The names of the store pairs, in the order tests run them. */
export const STORE_NAMES = ["embedded", "aws"] as const;

export type PairName = (typeof STORE_NAMES)[number];

/** An open store pair; `close` releases it and removes what it wrote locally. */
export interface Pair {
  name: PairName;
  stores: Stores;
  close(): void;
}

/** Opens a fresh, empty store pair. */
export async function openPair(name: PairName): Promise<Pair> {
  if (name === "aws") return { name, stores: await testAwsStores(), close() {} };
  const dir = mkdtempSync(join(tmpdir(), "pisync-stores-"));
  const stores = embeddedStores(dir);
  return {
    name,
    stores,
    close() {
      stores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Declares the suite once per store pair, as `title (embedded)` and `title (aws)`. The pair is
 * opened before the suite's own hooks run and closed after them; `body` reads it through
 * `pair()` inside hooks and tests.
 *
 * @example
 * ```ts
 * describeOnEveryStore("blobs", (pair) => {
 *   it("stores bytes", async () => {
 *     await pair().stores.blobs.put("k", bytes);
 *   });
 * });
 * ```
 */
export function describeOnEveryStore(title: string, body: (pair: () => Pair, name: PairName) => void): void {
  for (const name of STORE_NAMES) {
    describe(`${title} (${name})`, () => {
      let opened: Pair | undefined;
      beforeAll(async () => {
        opened = await openPair(name);
      });
      afterAll(() => opened?.close());
      body(() => {
        if (!opened) throw new Error(`the ${name} stores are not open yet (read them inside a hook or test)`);
        return opened;
      }, name);
    });
  }
}
