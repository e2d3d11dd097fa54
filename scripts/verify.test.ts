/**
 * `npm run verify` on both stores, as a separate process with the same store flags as `npm
 * start`: a clean store exits 0; a planted orphan and a head gone back one commit are reported
 * (exit 1), then repaired by `--repair --min-age 0` with the bytes exact (exit 0); a head naming
 * a missing object is reported and stays wrong.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Appender } from "@pisync/core";
import { type Stores, segmentKey } from "@pisync/store";
import { awsStores, ensureTable } from "@pisync/store/aws";
import { embeddedStores } from "@pisync/store/embedded";
import { testAwsEnv } from "@pisync/testing/cli";
import { afterAll, describe, expect, inject, it } from "vitest";

const exec = promisify(execFile);
const enc = (text: string) => new TextEncoder().encode(text);
const header = `${JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
const message = (n: number) =>
  `${JSON.stringify({ type: "message", id: `m${n}`, parentId: n > 1 ? `m${n - 1}` : null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `line ${n}`, timestamp: 1 } })}\n`;

const dataDir = mkdtempSync(join(tmpdir(), "pisync-verify-cli-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** A store pair and the flags and environment that name it to the command. */
interface Target {
  stores: Stores;
  flags: string[];
  env: NodeJS.ProcessEnv;
  close(): void;
}

const targets: Record<string, () => Promise<Target>> = {
  embedded: async () => {
    const stores = embeddedStores(dataDir);
    return { stores, flags: ["--data", dataDir], env: {}, close: () => stores.close() };
  },
  aws: async () => {
    const table = `pisync-verify-${randomUUID()}`;
    const env = testAwsEnv(
      { s3: inject("s3Endpoint"), dynamodb: inject("dynamodbEndpoint"), bucket: inject("s3Bucket") },
      table,
    );
    const connection = {
      region: env.AWS_REGION,
      credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
      endpoints: { s3: env.AWS_ENDPOINT_URL_S3, dynamodb: env.AWS_ENDPOINT_URL_DYNAMODB },
      s3PathStyle: true,
    };
    await ensureTable(connection, table);
    return {
      stores: awsStores({ ...connection, bucket: env.PISYNC_BUCKET, table }),
      flags: ["--store", "aws"],
      env,
      close() {},
    };
  },
};

for (const [name, open] of Object.entries(targets)) {
  describe(`npm run verify (${name})`, () => {
    it("reports an orphan and a head behind its bytes, repairs both with the bytes exact, and a missing object stays wrong", async () => {
      const target = await open();
      const user = `u-${randomUUID()}`;
      const verify = (...args: string[]) =>
        exec(
          process.execPath,
          ["--conditions=source", "--import", "tsx", "scripts/verify.ts", ...target.flags, "--user", user, ...args],
          { env: { ...process.env, ...target.env } },
        ).then(
          (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
          (e: { code: number; stdout: string; stderr: string }) => e,
        );
      try {
        const { stores } = target;
        const appender = new Appender(stores);
        const write = (offset: number, text: string) =>
          appender.append({ userId: user, sessionId: "s", offset, body: enc(text) });
        await write(0, header);
        await write(header.length, message(1));
        const clean = await verify("--min-age", "0");
        expect(clean.code, clean.stdout + clean.stderr).toBe(0);
        expect(clean.stdout).toMatch(/1 sessions, \d+ objects checked: 0 wrong/);

        // A commit whose record is lost: the old head is written back, its segment stays.
        const before = await stores.meta.getHead(user, "s");
        await write(header.length + message(1).length, message(2));
        const after = await stores.meta.getHead(user, "s");
        if (!before || !after) throw new Error("no head");
        await stores.meta.commit({
          head: { ...before, revision: after.revision + 1 },
          expectedRevision: after.revision,
        });
        const orphan = segmentKey(user, "s", 1, 0, 4, "planted");
        await stores.blobs.put(orphan, enc("abc\n"));

        const wrong = await verify("--min-age", "0");
        expect(wrong.code).toBe(1);
        expect(wrong.stdout).toContain(`WRONG orphan ${orphan}`);
        expect(wrong.stdout).toMatch(
          /WRONG head-behind .*the head ends at \d+, stored segments no head names continue it/,
        );

        const repaired = await verify("--repair", "--min-age", "0");
        expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
        expect(repaired.stdout).toContain(`repaired orphan ${orphan}`);
        expect(repaired.stdout).toMatch(/repaired head-behind .*rolled forward/);
        const head = await stores.meta.getHead(user, "s");
        const raw = await Promise.all((head?.current.segments ?? []).map((s) => stores.blobs.get(s.key)));
        expect(Buffer.concat(raw).toString()).toBe(header + message(1) + message(2));
        expect(await stores.blobs.list(orphan)).toEqual([]);
        expect((await verify("--min-age", "0")).code).toBe(0);

        await stores.blobs.delete([head?.current.segments[0]?.key as string]);
        const missing = await verify("--repair", "--min-age", "0");
        expect(missing.code).toBe(1);
        expect(missing.stdout).toContain("WRONG missing-object");
        expect(missing.stdout).toMatch(/: 1 wrong, 0 repaired/);
      } finally {
        target.close();
      }
    }, 180_000);
  });
}
