/** The synthesized template, asserted; and cdk-nag's AwsSolutions checks pass. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { PREFIXES, TABLE_SCHEMA } from "@pisync/store";
import { App, Validations } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { acknowledgeNagFindings } from "../lib/nag.js";
import { PisyncStack } from "../lib/pisync-stack.js";

/** The sweep's event, as the Lambda entry tells it apart (functions/api/src/lambda.ts's `SWEEP_EVENT`). */
const SWEEP_EVENT = { pisync: "sweep" };

/** Bytes of a bundled module and of every module it imports statically, transitively. */
function staticClosureBytes(entry: string): number {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(file, "utf8");
    // Minified static imports: `import{a as b}from"./chunks/x.mjs"` or `from"./x.mjs"`.
    for (const [, path] of code.matchAll(/(?:^|[;\s}])(?:import|export)[^"'()]*?from\s*["'](\.[^"']+)["']/g)) {
      visit(join(file, "..", path as string));
    }
  };
  visit(entry);
  return [...seen].reduce((sum, file) => sum + statSync(file).size, 0);
}

describe("the pisync stack", () => {
  let app: App;
  let template: Template;
  beforeAll(() => {
    app = new App();
    template = Template.fromStack(new PisyncStack(app, "Test"));
  }, 120_000);

  it("ships the bundle the benchmark measures: index.mjs, its chunks and their source maps", () => {
    template.hasResourceProperties("AWS::Lambda::Function", { Runtime: "nodejs22.x", Handler: "index.handler" });
    const outdir = app.synth().directory;
    const assets = readdirSync(outdir).filter((name) => existsSync(join(outdir, name, "index.mjs")));
    expect(assets).toHaveLength(1);
    const asset = join(outdir, assets[0] as string);
    const entry = readFileSync(join(asset, "index.mjs"), "utf8");
    expect(entry).toContain("sourceMappingURL=index.mjs.map");
    expect(existsSync(join(asset, "index.mjs.map"))).toBe(true);
    // The share page's libraries (highlight.js here) are in a chunk loaded on demand, not in the entry.
    const chunks = readdirSync(join(asset, "chunks")).filter((name) => name.endsWith(".mjs"));
    expect(entry).not.toContain("hljs");
    expect(chunks.filter((name) => readFileSync(join(asset, "chunks", name), "utf8").includes("hljs"))).toHaveLength(1);
    // What a cold start reads (the entry and the chunks it imports statically) stays within a
    // budget: one static import of a heavy library (classic zod, the viewer) would break it.
    expect(staticClosureBytes(join(asset, "index.mjs"))).toBeLessThan(700 * 1024);
  });

  it("keeps bytes in a private, encrypted, TLS-only bucket with lifecycle rules", () => {
    template.hasResourceProperties("AWS::S3::Bucket", {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
      },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
          Match.objectLike({ Prefix: "uploads/", ExpirationInDays: 1 }),
          Match.objectLike({
            Prefix: "sessions/",
            Transitions: [{ StorageClass: "INTELLIGENT_TIERING", TransitionInDays: 30 }],
          }),
        ]),
      },
    });
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
        ]),
      },
    });
  });

  it("keeps metadata in an on-demand table with point-in-time recovery, TTL and the listing index", () => {
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      BillingMode: "PAY_PER_REQUEST",
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: "gsi1" })],
    });
  });

  it("runs the API on arm64 Node 22 behind a function URL, with the secret's ARN (never its value)", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Runtime: "nodejs22.x",
      Architectures: ["arm64"],
      Environment: {
        Variables: Match.objectLike({
          PISYNC_BUCKET: Match.anyValue(),
          PISYNC_TABLE: Match.anyValue(),
          PISYNC_SHARE_KEY_SECRET: { Ref: Match.stringLikeRegexp("ShareSigningKey") },
        }),
      },
    });
    template.hasResourceProperties("AWS::Lambda::Url", { AuthType: "NONE" });
    template.hasResourceProperties("AWS::SecretsManager::Secret", {
      GenerateSecretString: Match.objectLike({ PasswordLength: 64 }),
    });
    template.hasResourceProperties("AWS::Logs::LogGroup", { RetentionInDays: 30 });
    template.hasOutput("Endpoint", {});
  });

  it("bounds what a flood can cost: reserved concurrency and a short timeout", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Runtime: "nodejs22.x",
      ReservedConcurrentExecutions: 20,
      Timeout: 15,
    });
  });

  it("grants least privilege: no managed policies, no action wildcards", () => {
    const roles = template.findResources("AWS::IAM::Role");
    for (const role of Object.values(roles)) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const policies = template.findResources("AWS::IAM::Policy");
    const actions = Object.values(policies).flatMap((p) =>
      p.Properties.PolicyDocument.Statement.flatMap((s: { Action: string | string[] }) => [s.Action].flat()),
    );
    expect(actions.length).toBeGreaterThan(0);
    for (const action of actions) expect(action).not.toMatch(/\*/);
  });

  it("grants objects under exactly the storage layout's prefixes, and the table with its index", () => {
    const statements = Object.values(template.findResources("AWS::IAM::Policy")).flatMap(
      (p) =>
        p.Properties.PolicyDocument.Statement as {
          Action: string | string[];
          Resource: unknown;
          Condition?: unknown;
        }[],
    );
    const objects = statements.find((s) => [s.Action].flat().includes("s3:GetObject"));
    // Object ARNs synthesize as { "Fn::Join": ["", [<bucket ARN>, "/<prefix>*"]] }.
    const suffixes = [objects?.Resource]
      .flat()
      .map((r) => (r as { "Fn::Join": [string, unknown[]] })["Fn::Join"][1].at(-1));
    const expected = Object.values(PREFIXES).map((prefix) => `/${prefix}*`);
    expect(suffixes.sort()).toEqual([...expected].sort());
    const listing = statements.find((s) => [s.Action].flat().includes("s3:ListBucket"));
    expect(listing?.Condition).toEqual({
      StringLike: { "s3:prefix": Object.values(PREFIXES).map((prefix) => `${prefix}*`) },
    });
    const table = statements.find((s) => [s.Action].flat().includes("dynamodb:Query"));
    expect(JSON.stringify(table?.Resource)).toContain(`/index/${TABLE_SCHEMA.index.name}`);
    // The bucket's lifecycle rules name the same prefixes.
    template.hasResourceProperties("AWS::S3::Bucket", {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Prefix: PREFIXES.uploads }),
          Match.objectLike({ Prefix: PREFIXES.sessions }),
        ]),
      },
    });
  });

  it("runs the function as its own role, whose policies hold exactly the construct's grants", () => {
    const functions = Object.values(template.findResources("AWS::Lambda::Function")).filter(
      (f) => f.Properties.Runtime === "nodejs22.x",
    );
    expect(functions).toHaveLength(1);
    const [fn] = functions as [{ Properties: { Role: { "Fn::GetAtt": [string, string] } } }];
    const roleId = fn.Properties.Role["Fn::GetAtt"][0];
    const [fnId] = Object.keys(
      template.findResources("AWS::Lambda::Function", { Properties: { Runtime: "nodejs22.x" } }),
    );
    const policies = Object.values(template.findResources("AWS::IAM::Policy")).filter((p) =>
      (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId),
    );
    expect(policies).toHaveLength(2);
    type Statement = { Action: string | string[]; Resource: unknown };
    const [policy, invoke] = policies as [
      { Properties: { PolicyDocument: { Statement: Statement[] } } },
      { Properties: { PolicyDocument: { Statement: Statement[] } } },
    ];
    // The search indexer's next pass: the function invokes itself, and nothing else.
    expect(invoke.Properties.PolicyDocument.Statement).toEqual([
      expect.objectContaining({ Action: "lambda:InvokeFunction", Resource: { "Fn::GetAtt": [fnId, "Arn"] } }),
    ]);
    const actions = policy.Properties.PolicyDocument.Statement.map((s) => [s.Action].flat().sort());
    expect(actions).toEqual([
      ["logs:CreateLogStream", "logs:PutLogEvents"],
      ["s3:DeleteObject", "s3:GetObject", "s3:PutObject"],
      ["s3:ListBucket"],
      [
        "dynamodb:BatchGetItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:ConditionCheckItem",
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
      ],
      ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"],
    ]);
  });

  it("declares the table schema of the storage layout", () => {
    const { partitionKey, sortKey, index, ttlAttribute } = TABLE_SCHEMA;
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      KeySchema: [
        { AttributeName: partitionKey, KeyType: "HASH" },
        { AttributeName: sortKey, KeyType: "RANGE" },
      ],
      TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: "HASH" },
            { AttributeName: index.sortKey, KeyType: "RANGE" },
          ],
        }),
      ],
    });
  });

  it("runs the search indexer on a schedule: the API function, invoked by an EventBridge rule", () => {
    const [fnId] = Object.keys(
      template.findResources("AWS::Lambda::Function", { Properties: { Runtime: "nodejs22.x" } }),
    );
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(1 minute)",
      State: "ENABLED",
      Targets: [Match.objectLike({ Arn: { "Fn::GetAtt": [fnId, "Arn"] }, RetryPolicy: { MaximumRetryAttempts: 0 } })],
    });
    template.hasResourceProperties("AWS::Lambda::Permission", {
      Action: "lambda:InvokeFunction",
      Principal: "events.amazonaws.com",
      FunctionName: { "Fn::GetAtt": [fnId, "Arn"] },
    });
    // Room in /tmp for users' index files.
    template.hasResourceProperties("AWS::Lambda::Function", { EphemeralStorage: { Size: 2048 } });
    expect(Object.values(PREFIXES)).toContain("search/");
  });

  it("runs the sweep hourly: the API function, invoked with the sweep's own event", () => {
    const [fnId] = Object.keys(
      template.findResources("AWS::Lambda::Function", { Properties: { Runtime: "nodejs22.x" } }),
    );
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(1 hour)",
      State: "ENABLED",
      Targets: [
        Match.objectLike({
          Arn: { "Fn::GetAtt": [fnId, "Arn"] },
          Input: JSON.stringify(SWEEP_EVENT),
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
  });

  it("ships search's WebAssembly SQLite beside the bundle", () => {
    const assembly = app.synth();
    const assets = readdirSync(assembly.directory).filter((name) => name.startsWith("asset."));
    const withBundle = assets.filter((name) => existsSync(join(assembly.directory, name, "index.mjs")));
    expect(withBundle).toHaveLength(1);
    expect(existsSync(join(assembly.directory, withBundle[0] as string, "node-sqlite3-wasm.wasm"))).toBe(true);
  });

  it("alarms on function errors and throttles, and on table throttles", () => {
    template.resourceCountIs("AWS::CloudWatch::Alarm", 3);
    template.hasResourceProperties("AWS::CloudWatch::Alarm", { MetricName: "Errors", Threshold: 1 });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", { MetricName: "Throttles", Threshold: 1 });
  });
});

describe("cdk-nag AwsSolutions", () => {
  function synthWithNag(acknowledge: boolean) {
    const app = new App();
    const stack = new PisyncStack(app, "Nag");
    if (acknowledge) acknowledgeNagFindings(stack);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    return () => app.synth();
  }

  it("passes, each acknowledgement with a written reason", () => {
    expect(synthWithNag(true)).not.toThrow();
  }, 120_000);

  it("fails without the acknowledgements (the checks do run)", () => {
    expect(synthWithNag(false)).toThrow();
  }, 120_000);
});
