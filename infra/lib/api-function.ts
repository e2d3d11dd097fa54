/**
 * The API function with its grants: one construct owns the function, its role and what the role
 * may do, so the least-privilege policy sits beside the code that needs it.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PREFIXES } from "@pisync/store";
import {
  AssetHashType,
  Duration,
  type aws_dynamodb as dynamodb,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  RemovalPolicy,
  Size,
  type aws_s3 as s3,
  type aws_secretsmanager as secrets,
} from "aws-cdk-lib";
import { Construct } from "constructs";
import { buildSync } from "esbuild";
import { copyLambdaAssets, LAMBDA_HANDLER, lambdaBuildOptions } from "./bundling.js";

const apiRoot = fileURLToPath(new URL("../../functions/api", import.meta.url));

/**
 * The function's code: the bundle `lambdaBuildOptions` describes (the options the benchmark
 * measures and the bundle test runs), with source maps, built by esbuild on this machine at
 * synth (`NodejsFunction` cannot split code into chunks).
 */
function apiCode(): lambda.Code {
  return lambda.Code.fromAsset(apiRoot, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Used only when the local build fails (it does not need Docker).
      image: lambda.Runtime.NODEJS_22_X.bundlingImage,
      local: {
        tryBundle(outputDir) {
          buildSync({
            ...lambdaBuildOptions(join(apiRoot, "src/lambda.ts"), join(outputDir, "index.mjs")),
            sourcemap: true,
          });
          // Beside the bundle, the files it reads from its own folder (search's WebAssembly SQLite).
          copyLambdaAssets(outputDir);
          return true;
        },
      },
    },
  });
}

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
 * table's item actions, reading the share key, and invoking itself (the search indexer's next pass).
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
          // The cards of a page of shares' sessions, read at once.
          "dynamodb:BatchGetItem",
          "dynamodb:ConditionCheckItem",
          // The last use of a token or browser session: one attribute, on an item that exists.
          "dynamodb:UpdateItem",
        ],
        resources: [table.tableArn, `${table.tableArn}/index/${props.indexName}`],
      }),
    );
    shareKey.grantRead(this.role);

    this.function = new lambda.Function(this, "Function", {
      role: this.role,
      code: apiCode(),
      handler: LAMBDA_HANDLER,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 1024,
      // Every request is bounded (Markdown and masking per entry, batched reads): a request
      // still running after 15 s is stuck, not busy; the CLI retries a 5xx.
      timeout: Duration.seconds(15),
      // Search keeps users' index files in /tmp (a 256 MiB cache, and the copy a change is made
      // on): room beyond them for a large user's index. Billed only while the function runs.
      ephemeralStorageSize: Size.gibibytes(2),
      reservedConcurrentExecutions: props.reservedConcurrency,
      // Its own asynchronous invocations (the indexer's next pass) are not sent again on an
      // error: the pass's chain lets its lease run out and the schedule starts another.
      retryAttempts: 0,
      logGroup,
      environment: {
        PISYNC_BUCKET: bucket.bucketName,
        PISYNC_TABLE: table.tableName,
        PISYNC_SHARE_KEY_SECRET: shareKey.secretArn,
        PISYNC_MAX_SHARE_DAYS: String(props.maxShareDays),
        // No `--enable-source-maps`: Node would read and parse the maps at import, about 16 ms
        // of every cold start. The maps ship beside the code to map a logged stack trace.
      },
    });
    // A scheduled pass that leaves marks due invokes the function for the next one. A policy of
    // its own: in the role's policy, the function's ARN would make the function depend on itself.
    new iam.Policy(this, "InvokeItself", {
      roles: [this.role],
      statements: [
        new iam.PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [this.function.functionArn] }),
      ],
    });
  }
}
