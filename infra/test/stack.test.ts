/** The synthesized template, asserted; and cdk-nag's AwsSolutions checks pass. */
import { PREFIXES, TABLE_SCHEMA } from "@pisync/store";
import { App, Validations } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { acknowledgeNagFindings } from "../lib/nag.js";
import { PisyncStack } from "../lib/pisync-stack.js";

describe("the pisync stack", () => {
  let template: Template;
  beforeAll(() => {
    const app = new App();
    template = Template.fromStack(new PisyncStack(app, "Test"));
  }, 120_000);

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
          Match.objectLike({ Prefix: "uploads/", ExpirationInDays: 2 }),
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

  it("runs the function as its own role, whose one policy holds exactly the construct's grants", () => {
    const functions = Object.values(template.findResources("AWS::Lambda::Function")).filter(
      (f) => f.Properties.Runtime === "nodejs22.x",
    );
    expect(functions).toHaveLength(1);
    const [fn] = functions as [{ Properties: { Role: { "Fn::GetAtt": [string, string] } } }];
    const roleId = fn.Properties.Role["Fn::GetAtt"][0];
    const policies = Object.values(template.findResources("AWS::IAM::Policy")).filter((p) =>
      (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId),
    );
    expect(policies).toHaveLength(1);
    const [policy] = policies as [{ Properties: { PolicyDocument: { Statement: { Action: string | string[] }[] } } }];
    const actions = policy.Properties.PolicyDocument.Statement.map((s) => [s.Action].flat().sort());
    expect(actions).toEqual([
      ["logs:CreateLogStream", "logs:PutLogEvents"],
      ["s3:DeleteObject", "s3:GetObject", "s3:PutObject"],
      ["s3:ListBucket"],
      [
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
