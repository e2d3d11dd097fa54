/**
 * The first share page of a large session on a fresh instance: a new app over new store clients
 * (as a new Lambda instance, or a restarted server, has: nothing kept), its first request's
 * server time, with the session's persisted tree index and, as the baseline in the same run,
 * without it (the index rebuilt from every index page). On the embedded pair and on the AWS
 * pair (DynamoDB Local + s3rver behind the SigV4 gate). Target: ≤ 500 ms.
 *
 * Usage (alone): node --conditions=source --import tsx scripts/bench/share-fresh.ts
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { createApp } from "@pisync/api";
import { newShareKeys, Tokens } from "@pisync/core";
import { splitLines } from "@pisync/format";
import { type Stores, sessionIndexPrefix } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { embeddedStores } from "@pisync/store/embedded";
import { withoutPersistedIndexes } from "@pisync/testing/index-reads";
import { withAwsServers } from "./aws-servers.js";
import { cachedSession } from "./generate-session.js";

/** Runs of each kind (fresh apps each); the median and the slowest are reported. */
const RUNS = 7;

/** What one pair measured, in ms. */
export interface FreshShareFigures {
  rebuilt: { ms: number; cpu: number }[];
  persisted: { ms: number; cpu: number }[];
  /** Size of the persisted index object (gzip). */
  indexBytes: number;
}

/**
 * Uploads `bytes` (session `id`) through an app over `open()`, shares it, and times the first
 * share page of fresh apps (each over a fresh `open()`), with and without the persisted index.
 */
export async function measureFreshShare(
  open: () => { stores: Stores; close(): void },
  bytes: Uint8Array,
  id: string,
): Promise<FreshShareFigures> {
  const keys = newShareKeys();
  const appOver = (stores: Stores) => createApp({ stores, shareKeys: async () => keys, log: () => {} });
  const setup = open();
  const app = appOver(setup.stores);
  const auth = { Authorization: `Bearer ${(await new Tokens(setup.stores.meta).create("bench", "bench")).token}` };
  let start = 0;
  const spans = splitLines(bytes);
  for (let k = 0; k < spans.length; ) {
    let end = start;
    while (k < spans.length && end - start < 1024 * 1024) end = spans[k++].offset + spans[k - 1].length + 1;
    const r = await app.request(`/v1/sessions/${id}`, {
      method: "PATCH",
      headers: { ...auth, "Upload-Offset": String(start), "Content-Encoding": "gzip" },
      body: gzipSync(bytes.subarray(start, end)),
    });
    if (r.status !== 200) throw new Error(await r.text());
    start = end;
  }
  const created = await app.request(`/v1/sessions/${id}/shares`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json" },
    body: "{}",
  });
  const path = new URL(((await created.json()) as { url: string }).url).pathname;

  /**
   * The first page of a fresh app over fresh store clients: its server time and the process's
   * CPU time meanwhile, in ms (CPU time is what a busy machine inflates least). The tree the
   * page's script asks for next is awaited after, so that its work never overlaps the next run.
   */
  const firstPage = async (persisted: boolean) => {
    const fresh = open();
    try {
      const instance = appOver(persisted ? fresh.stores : withoutPersistedIndexes(fresh.stores));
      const cpu = process.cpuUsage();
      const t = performance.now();
      const res = await instance.request(path, { headers: { "Accept-Encoding": "gzip" } });
      await res.arrayBuffer();
      const ms = performance.now() - t;
      const used = process.cpuUsage(cpu);
      if (res.status !== 200) throw new Error(`share page answered ${res.status}`);
      await (await instance.request(`${path}/tree`)).arrayBuffer();
      return { ms, cpu: (used.user + used.system) / 1000 };
    } finally {
      fresh.close();
    }
  };
  // The first fresh reader of the session writes its index after its answer.
  const indexKeys = () => setup.stores.blobs.listObjects(sessionIndexPrefix("bench", id));
  await firstPage(true);
  for (let i = 0; i < 100 && (await indexKeys()).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
  const [index] = await indexKeys();
  if (!index) throw new Error("no tree index was persisted");
  const figures: FreshShareFigures = { rebuilt: [], persisted: [], indexBytes: index.size };
  for (let i = 0; i < RUNS; i++) {
    figures.rebuilt.push(await firstPage(false));
    figures.persisted.push(await firstPage(true));
  }
  setup.close();
  return figures;
}

/** Both pairs, one after the other, with the figures printed. */
export async function freshShareBench(bytes: Uint8Array, id: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "pisync-share-fresh-"));
  try {
    const embedded = await measureFreshShare(
      () => {
        const stores = embeddedStores(join(dir, "data"));
        return { stores, close: () => stores.close() };
      },
      bytes,
      id,
    );
    print("embedded", embedded);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const aws = await withAwsServers((config) =>
    measureFreshShare(() => ({ stores: awsStores(config), close() {} }), bytes, id),
  );
  print("AWS pair", aws);
}

function print(pair: string, f: FreshShareFigures): void {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const stat = (runs: { ms: number; cpu: number }[]) => {
    const ms = runs.map((r) => r.ms);
    return `median ${median(ms).toFixed(0)} ms (CPU ${median(runs.map((r) => r.cpu)).toFixed(0)} ms), slowest ${Math.max(...ms).toFixed(0)} ms`;
  };
  console.log(
    `first share page on a fresh instance (${pair}, ${RUNS} fresh apps each): persisted index ${stat(f.persisted)}; ` +
      `rebuilt from the pages ${stat(f.rebuilt)} (target ≤ 500 ms; index object ${(f.indexBytes / 1024).toFixed(0)} KB)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const benchDir = join(process.cwd(), ".bench");
  mkdirSync(benchDir, { recursive: true });
  const bytes = readFileSync(cachedSession(benchDir));
  const id = JSON.parse(bytes.subarray(0, bytes.indexOf(10)).toString()).id as string;
  await freshShareBench(bytes, id);
}
