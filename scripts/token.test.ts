/** `npm run token` against a deployed table (here DynamoDB Local), as the README's deploy steps run it. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Tokens } from "@pisync/core";
import { DynamoMetaStore, ensureTable } from "@pisync/store/aws";
import { expect, inject, it } from "vitest";

const run = promisify(execFile);
// DynamoDB Local takes any key made of letters and digits.
const credentials = { accessKeyId: "tokentest", secretAccessKey: "tokentest" };

function token(args: string[]) {
  return run(process.execPath, ["--conditions=source", "--import", "tsx", "scripts/token.ts", ...args], {
    // The SDK's default credential chain reads these first.
    env: {
      ...process.env,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

it("creates a token in a deployed table that the API then accepts", async () => {
  const connection = { region: "eu-west-1", credentials, endpoints: { dynamodb: inject("dynamodbEndpoint") } };
  const table = `pisync-token-${Date.now()}`;
  await ensureTable(connection, table);
  const created = await token([
    "--user",
    "alice",
    "--table",
    table,
    "--region",
    "eu-west-1",
    "--endpoint",
    inject("dynamodbEndpoint"),
  ]);
  expect(created.code, created.stderr).toBe(0);
  const secret = created.stdout.trim().split("\n").pop() as string;
  const record = await new Tokens(new DynamoMetaStore(connection, table)).authenticate(secret);
  expect(record.userId).toBe("alice");
});

it("answers a bad command with usage (2) and an unreachable table with failure (1)", async () => {
  const noRegion = await token(["--user", "alice", "--table", "t"]);
  expect(noRegion.code).toBe(2);
  expect(noRegion.stderr).toContain("--region");
  const both = await token(["--user", "alice", "--table", "t", "--data", "/tmp/x"]);
  expect(both.code).toBe(2);
  const missing = await token([
    "--user",
    "alice",
    "--table",
    "no-such-table",
    "--region",
    "eu-west-1",
    "--endpoint",
    inject("dynamodbEndpoint"),
  ]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("ResourceNotFoundException");
});
