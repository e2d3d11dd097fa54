/**
 * The one suite every storage adapter must pass (run by embedded.test.ts and aws.test.ts), one
 * file per port (`contract-*.ts`). It pins down the ports' error contract: missing blobs are
 * NotFoundError, stale commits are RevisionConflictError carrying the stored head, and a failed
 * commit writes nothing.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type GenerationState,
  type IndexPage,
  type SessionHead,
  StorageUnavailableError,
  type Stores,
} from "../src/index.js";
import { describeBlobContract } from "./contract-blobs.js";
import { describeBrowserSessionContract } from "./contract-browser-sessions.js";
import { describeCardContract } from "./contract-cards.js";
import { describeTokenContract } from "./contract-credentials.js";
import { describeSessionContract } from "./contract-sessions.js";
import { describeShareContract } from "./contract-shares.js";
import { describeSignInContract } from "./contract-sign-in.js";
import { describeUsageContract } from "./contract-usage.js";

export const bytes = (text: string) => new TextEncoder().encode(text);
export const text = (data: Uint8Array) => new TextDecoder().decode(data);

export function generation(n: number, length = 0): GenerationState {
  return { generation: n, length, lines: 0, values: 0, segments: [], createdAt: "2026-01-01T00:00:00.000Z" };
}

export function head(userId: string, sessionId: string, revision: number, updatedAt: string): SessionHead {
  return {
    userId,
    sessionId,
    revision,
    current: generation(1, revision * 10),
    generations: 1,
    summary: { hasHeader: true, entries: revision, tokens: 0, cost: 0, leafId: null, problemCount: 0, problems: [] },
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt,
  };
}

export function page(generationNumber: number, start: number, end: number): IndexPage {
  return {
    generation: generationNumber,
    start,
    end,
    records: [
      { line: 1, offset: start, length: end - start - 1, value: 1, isObject: true, parentId: null, id: `e${start}` },
    ],
    problems: [],
  };
}

/** What each port's part of the suite is given: the stores under test (read when its tests run), fresh user ids. */
export interface ContractContext {
  stores: Stores;
  user: () => string;
}

/**
 * @param unreachable stores of the same adapter whose servers cannot be reached (when the
 *   adapter has servers): every call is `StorageUnavailableError`, never a vendor error
 */
export function describeStoreContract(
  name: string,
  makeStores: () => Promise<Stores>,
  unreachable?: () => Promise<Stores>,
) {
  describe(`storage contract: ${name}`, () => {
    if (unreachable) {
      it("a store that cannot be reached is StorageUnavailableError on every port, reads and writes", async () => {
        const down = await unreachable();
        const u = user();
        const calls: [string, () => Promise<unknown>][] = [
          ["blobs.put", () => down.blobs.put(`t/${u}/a`, bytes("x\n"))],
          ["blobs.get", () => down.blobs.get(`t/${u}/a`)],
          ["blobs.list", () => down.blobs.list(`t/${u}/`)],
          ["blobs.delete", () => down.blobs.delete([`t/${u}/a`])],
          ["meta.getHead", () => down.meta.getHead(u, "s")],
          [
            "meta.commit",
            () => down.meta.commit({ head: head(u, "s", 1, "2026-01-01T00:00:00.000Z"), expectedRevision: null }),
          ],
          ["meta.findToken", () => down.meta.findToken("0".repeat(64))],
        ];
        for (const [what, call] of calls) {
          const error = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error, what).toBeInstanceOf(StorageUnavailableError);
        }
      }, 60_000);
    }

    let stores: Stores;
    // Every test uses fresh ids, so the suite needs no cleanup between tests.
    const user = () => `u-${randomUUID()}`;
    beforeAll(async () => {
      stores = await makeStores();
    });
    // The stores as they are once set up: each part reads them when its tests run.
    const live: Stores = {
      get blobs() {
        return stores.blobs;
      },
      get meta() {
        return stores.meta;
      },
      get teams() {
        return stores.teams;
      },
    };
    const context: ContractContext = { stores: live, user };

    describeBlobContract(context);
    describe("metadata", () => {
      describeSessionContract(context);
      describeTokenContract(context);
      describeSignInContract(context);
      describeBrowserSessionContract(context);
      describeShareContract(context);
      describeCardContract(context);
    });
    describeUsageContract(context);
  });
}
