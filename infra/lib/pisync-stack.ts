/**
 * pisync on AWS: costs nothing while idle, scales with use.
 * - S3: the raw bytes (segments), private, encrypted, TLS only;
 * - DynamoDB: heads, tree pages, tokens, shares; on demand, point-in-time recovery, TTL;
 * - Lambda (arm64, Node 22) behind a function URL (HTTPS, 6 MB payloads, binary and gzip
 *   bodies base64-encoded by the Lambda adapter); larger lines go straight to S3 presigned;
 * - the share-signing key in Secrets Manager (never in code or in the template);
 * - search: each user's SQLite FTS5 index as one object under `search/`, its pointer and the
 *   marks of written sessions in the table; an EventBridge schedule invokes the same function to
 *   index what was marked (no cluster, nothing running between invocations);
 * - an hourly sweep (another schedule of the same function) removes objects no head names;
 * - least-privilege grants, log retention, alarms on errors and throttles.
 */
import { PREFIXES, TABLE_SCHEMA } from "@pisync/store";
import {
  CfnOutput,
  aws_cloudwatch as cloudwatch,
  Duration,
  aws_dynamodb as dynamodb,
  aws_events as events,
  aws_lambda as lambda,
  RemovalPolicy,
  Stack,
  type StackProps,
  aws_s3 as s3,
  aws_secretsmanager as secrets,
  aws_events_targets as targets,
} from "aws-cdk-lib";
import type { Construct } from "constructs";
import { ApiFunction } from "./api-function.js";

export interface PisyncStackProps extends StackProps {
  /** Days a share link may live at most (default 90). */
  maxShareDays?: number;
  /**
   * Concurrent executions reserved for the API (default 20): what one link, or anyone, can
   * make the function do at once, and so what a flood can cost; past it requests are
   * throttled (429). The account must keep 10 unreserved.
   */
  reservedConcurrency?: number;
  /**
   * How often the search indexer runs over the sessions written since they were indexed
   * (default every minute; a search indexes its own user's first in any case).
   */
  searchIndexEvery?: Duration;
}

export class PisyncStack extends Stack {
  readonly bucket: s3.Bucket;
  readonly table: dynamodb.Table;
  readonly api: lambda.Function;

  constructor(scope: Construct, id: string, props: PisyncStackProps = {}) {
    super(scope, id, props);

    this.bucket = new s3.Bucket(this, "Sessions", {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        // A failed multipart upload leaves parts that cost money and serve nothing.
        { id: "abort-incomplete-multipart", abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // Large lines are uploaded here, then copied into a segment by the append that commits them;
        // what no append claimed goes after a day, as the embedded store's sweep does (UPLOAD_MAX_AGE_MS).
        { id: "expire-abandoned-uploads", prefix: PREFIXES.uploads, expiration: Duration.days(1) },
        // Old generations and merged-away segments are kept (they are the backup), but cold:
        // Intelligent-Tiering moves what is not read to cheaper tiers by itself.
        {
          id: "cold-sessions",
          prefix: PREFIXES.sessions,
          transitions: [{ storageClass: s3.StorageClass.INTELLIGENT_TIERING, transitionAfter: Duration.days(30) }],
        },
      ],
    });

    // The schema is the storage layout's (`@pisync/store`), as the adapter and its tests create it.
    const { partitionKey, sortKey, index, ttlAttribute } = TABLE_SCHEMA;
    this.table = new dynamodb.Table(this, "Metadata", {
      partitionKey: { name: partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
    });

    const shareKey = new secrets.Secret(this, "ShareSigningKey", {
      description: "HMAC-SHA256 key that signs pisync share links",
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });

    this.api = new ApiFunction(this, "Api", {
      bucket: this.bucket,
      table: this.table,
      indexName: index.name,
      shareKey,
      maxShareDays: props.maxShareDays ?? 90,
      reservedConcurrency: props.reservedConcurrency ?? 20,
    }).function;

    // The search indexer: the same function, on a schedule (its event is told apart from HTTP ones).
    new events.Rule(this, "SearchIndexSchedule", {
      description: "pisync: index the sessions written since they were last indexed",
      schedule: events.Schedule.rate(props.searchIndexEvery ?? Duration.minutes(1)),
      targets: [new targets.LambdaFunction(this.api, { retryAttempts: 0 })],
    });

    // The sweep: the same function, hourly, with its own input (see `SWEEP_EVENT`). It removes
    // segments no head names and abandoned uploads once an hour old, and rolls forward a head
    // behind its stored segments. A lifecycle rule cannot do it: referenced and unreferenced
    // segments share the `sessions/` prefix, and only the table tells them apart.
    new events.Rule(this, "SweepSchedule", {
      description: "pisync: remove objects no session names and roll heads forward to their stored bytes",
      schedule: events.Schedule.rate(Duration.hours(1)),
      targets: [
        new targets.LambdaFunction(this.api, {
          event: events.RuleTargetInput.fromObject({ pisync: "sweep" }),
          retryAttempts: 0,
        }),
      ],
    });

    const url = this.api.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });

    // One alarm per signal: any error or throttle within five minutes.
    const alarm = (id: string, description: string, metric: cloudwatch.IMetric) =>
      new cloudwatch.Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    const fiveMinutes = Duration.minutes(5);
    alarm("ApiErrors", "pisync API: invocations that failed", this.api.metricErrors({ period: fiveMinutes }));
    alarm("ApiThrottles", "pisync API: throttled invocations", this.api.metricThrottles({ period: fiveMinutes }));
    alarm(
      "TableThrottles",
      "pisync metadata table: throttled requests",
      new cloudwatch.MathExpression({
        expression: "reads + writes",
        usingMetrics: {
          reads: this.table.metric("ReadThrottleEvents", { period: fiveMinutes, statistic: "Sum" }),
          writes: this.table.metric("WriteThrottleEvents", { period: fiveMinutes, statistic: "Sum" }),
        },
        period: fiveMinutes,
      }),
    );

    new CfnOutput(this, "Endpoint", { value: url.url, description: "pisync login --endpoint <this>" });
    new CfnOutput(this, "TableName", { value: this.table.tableName });
    new CfnOutput(this, "BucketName", { value: this.bucket.bucketName });
  }
}
