/**
 * The API function with its grants: one construct owns the function, its role and what the role
 * may do, so the least-privilege policy sits beside the code that needs it.
 */
import { fileURLToPath } from "node:url";
import { PREFIXES } from "@pisync/store";
import {
  Duration,
  type aws_dynamodb as dynamodb,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  type aws_s3 as s3,
  type aws_secretsmanager as secrets,
} from "aws-cdk-lib";
import { Construct } from "constructs";
import { LAMBDA_BUNDLE, lambdaExternals } from "./bundling.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface ApiFunctionProps {
  /** Where session bytes live; the function gets objects under the storage layout's prefixes only. */
  bucket: s3.IBucket;
  /** The metadata table; the function gets the item actions the adapter uses, on it and its index. */
  table: dynamodb.ITable;
  /** The table's listing index (the storage layout's `TABLE_SCHEMA.index.name`). */
  indexName: string;
  /** The share-signing key; the function may read it. */
  shareKey: secrets.ISecret;
  /** Days a share link may live at most. */
  maxShareDays: number;
  /** Concurrent executions reserved for the function: what a flood of requests can cost at most. */
  reservedConcurrency: number;
}

/**
 * pisync's API as an arm64 Node 22 function, bundled as `infra/lib/bundling.ts` says (the options
 * `npm run bench:bundle` measures), with a role that has no managed policies and no action
 * wildcards: logs to its own log group (a month), objects under `PREFIXES` of the bucket, the
 * table's item actions, and reading the share key.
 * @example new ApiFunction(stack, "Api", { bucket, table, indexName: "gsi1", shareKey, maxShareDays: 90, reservedConcurrency: 20 })
 */
export class ApiFunction extends Construct {
  /** The function. */
  readonly function: lambda.Function;
  /** Its role, with exactly the grants above. */
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    super(scope, id);
    const { bucket, table, shareKey } = props;

    const logGroup = new logs.LogGroup(this, "Logs", {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // Least privilege, spelled out: no managed policies, no action wildcards; objects under the
    // storage layout's prefixes only.
    const prefixes = Object.values(PREFIXES).map((prefix) => `${prefix}*`);
    this.role = new iam.Role(this, "Role", { assumedBy: new iam.ServicePrincipal("lambda.amazonaws.com") });
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
        resources: [logGroup.logGroupArn],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
        resources: prefixes.map((pattern) => bucket.arnForObjects(pattern)),
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["s3:ListBucket"],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { "s3:prefix": prefixes } },
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: [
          "dynamodb:GetItem",
          "dynamodb:PutItem",
          // Share records and their view counters (an atomic ADD) are updated in place.
          "dynamodb:UpdateItem",
          "dynamodb:DeleteItem",
          "dynamodb:Query",
          "dynamodb:BatchWriteItem",
          "dynamodb:ConditionCheckItem",
        ],
        resources: [table.tableArn, `${table.tableArn}/index/${props.indexName}`],
      }),
    );
    shareKey.grantRead(this.role);

    this.function = new nodejs.NodejsFunction(this, "Function", {
      role: this.role,
      entry: `${repoRoot}functions/api/src/lambda.ts`,
      handler: "handler",
      projectRoot: repoRoot,
      depsLockFilePath: `${repoRoot}package-lock.json`,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 1024,
      // Every request is bounded (Markdown and masking per entry, batched reads): a request
      // still running after 15 s is stuck, not busy; the CLI retries a 5xx.
      timeout: Duration.seconds(15),
      reservedConcurrentExecutions: props.reservedConcurrency,
      logGroup,
      environment: {
        PISYNC_BUCKET: bucket.bucketName,
        PISYNC_TABLE: table.tableName,
        PISYNC_SHARE_KEY_SECRET: shareKey.secretArn,
        PISYNC_MAX_SHARE_DAYS: String(props.maxShareDays),
        NODE_OPTIONS: "--enable-source-maps",
      },
      bundling: {
        format: nodejs.OutputFormat.ESM,
        target: LAMBDA_BUNDLE.target,
        minify: LAMBDA_BUNDLE.minify,
        sourceMap: true,
        mainFields: LAMBDA_BUNDLE.mainFields,
        // The AWS SDK is bundled (pinned, minified: the faster cold start, see bench:bundle);
        // nothing is taken from the runtime.
        externalModules: lambdaExternals(),
        esbuildArgs: {
          "--conditions": LAMBDA_BUNDLE.conditions.join(","),
          ...Object.fromEntries(Object.entries(LAMBDA_BUNDLE.alias).map(([from, to]) => [`--alias:${from}`, to])),
        },
        banner: LAMBDA_BUNDLE.banner,
      },
    });
  }
}
