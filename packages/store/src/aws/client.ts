/**
 * The AWS SDK v3 clients pisync calls (S3, DynamoDB, Secrets Manager), made from one
 * connection: where requests go and as whom. Retries are the SDK's standard mode (exponential
 * backoff with jitter on network errors, 5xx and throttling). Every setting the SDK would
 * otherwise look up in the environment and in `~/.aws/config` (file reads on a Lambda's first
 * request) is given here, and connections are kept open between requests.
 *
 * Every attempt is bounded: a connection must open within `connectMs`, never stay silent longer
 * than `idleMs`, and (DynamoDB) answer within `requestMs` (see {@link DEFAULT_TIMEOUTS}), so a
 * stopped server costs at most `maxAttempts` times that plus the backoff, not the function's
 * whole 15 s. What is still failing after the retries (unreachable, timed out, throttled, 5xx)
 * comes out of `send` as `StorageUnavailableError` (cause: the SDK's error); every other error
 * as the SDK made it.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import type { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import { isThrottlingError, isTransientError } from "@smithy/core/retry";
import type { InitializeMiddleware, MetadataBearer, MiddlewareStack } from "@smithy/types";
import { StorageUnavailableError } from "../errors.js";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Where requests go and as whom. */
export interface AwsConnection {
  region: string;
  /** Fixed credentials, or a source asked before each request (it should cache). */
  credentials: AwsCredentials | (() => Promise<AwsCredentials>);
  /** Endpoints other than AWS's own, by service (DynamoDB Local, an S3-compatible server). */
  endpoints?: { s3?: string; dynamodb?: string; secretsmanager?: string };
  /** The bucket in the path rather than in the host name (S3-compatible servers). */
  s3PathStyle?: boolean;
  /** Attempts per request, the first included (default 3, the SDK's). */
  maxAttempts?: number;
  /** Bounds of each attempt, by service (defaults: {@link DEFAULT_TIMEOUTS}). */
  timeouts?: Partial<Record<Service, AttemptTimeouts>>;
  /**
   * Where clients made from this connection (and from copies of it) are kept, to be shared:
   * one DynamoDB client for every store and index, its settings resolved and its connection
   * opened once (the Lambda function's). A shared client destroyed (a store's `close`) is
   * destroyed for all: share only where nothing is closed before the process ends.
   */
  shared?: SharedClients;
}

/** The clients a connection shares (see {@link AwsConnection.shared}), made on first use. */
export interface SharedClients {
  dynamodb?: DynamoDBDocumentClient;
}

type Service = "s3" | "dynamodb" | "secretsmanager";

/** How long one attempt of a request may take. */
export interface AttemptTimeouts {
  /** To open a connection. */
  connectMs: number;
  /** The longest silence of the connection, sending or receiving: a stopped server ends here. */
  idleMs: number;
  /** To the answer's first byte, the request's body sent (none: a long upload may take its time). */
  requestMs?: number;
}

/**
 * Per attempt, chosen so that three attempts and their backoff fit well inside the Lambda's
 * 15 s (DynamoDB about 6.5 s, S3 about 9.5 s), including the head read that resolves a commit
 * whose answer was lost. DynamoDB answers in milliseconds. S3 is bounded by silence only: a
 * 16 MB body over a slow uplink takes long but never stalls, and a stopped server (SIGSTOP,
 * which accepts connections and never answers) stalls at once.
 */
export const DEFAULT_TIMEOUTS: Record<Service, AttemptTimeouts> = {
  dynamodb: { connectMs: 1000, idleMs: 2000, requestMs: 2000 },
  s3: { connectMs: 1000, idleMs: 3000 },
  secretsmanager: { connectMs: 1000, idleMs: 3000, requestMs: 3000 },
};

/** Whether an SDK error (after its retries) means the service was unreachable, slow, busy or failing. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const sdkError = error as Parameters<typeof isTransientError>[0];
  const status = sdkError.$metadata?.httpStatusCode ?? 0;
  return isThrottlingError(sdkError) || isTransientError(sdkError) || status >= 500;
}

/** Turns what is still failing after the SDK's retries into `StorageUnavailableError`. */
const classifyErrors: InitializeMiddleware<object, MetadataBearer> = (next) => async (args) => {
  try {
    return await next(args);
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    throw new StorageUnavailableError(`the storage service is unavailable: ${(error as Error).message}`, {
      cause: error,
    });
  }
};

/** Adds {@link classifyErrors} around everything else a client does (its retries included). */
function classifying<C extends { middlewareStack: MiddlewareStack<object, MetadataBearer> }>(client: C): C {
  client.middlewareStack.add(classifyErrors, { step: "initialize", priority: "high", name: "pisyncClassifyErrors" });
  return client;
}

/** The settings every client shares. */
function common(connection: AwsConnection, service: Service) {
  const { connectMs, idleMs, requestMs } = { ...DEFAULT_TIMEOUTS[service], ...connection.timeouts?.[service] };
  const bounds = {
    connectionTimeout: connectMs,
    socketTimeout: idleMs,
    ...(requestMs ? { requestTimeout: requestMs, throwOnRequestTimeout: true } : {}),
  };
  return {
    region: connection.region,
    credentials: connection.credentials,
    endpoint: connection.endpoints?.[service],
    maxAttempts: connection.maxAttempts ?? 3,
    retryMode: "standard" as const,
    // What the SDK would otherwise read from the environment or the shared config files.
    defaultsMode: "legacy" as const,
    useFipsEndpoint: false,
    useDualstackEndpoint: false,
    authSchemePreference: [] as string[],
    userAgentAppId: async () => undefined,
    // Correct for clock skew, as the SDK does by default.
    disableClockSkewCorrection: false,
    // One client per store and container: its sockets stay open for the next request.
    requestHandler: { httpAgent: { keepAlive: true }, httpsAgent: { keepAlive: true }, ...bounds },
  };
}

/**
 * An S3 client. Checksums only where S3 requires them: pisync sends Content-MD5 itself, and a
 * default CRC32 would be signed into presigned upload URLs (the upload's body has another).
 */
export function s3Client(connection: AwsConnection): S3Client {
  const client = new S3Client({
    ...common(connection, "s3"),
    forcePathStyle: connection.s3PathStyle ?? false,
    useArnRegion: false,
    disableS3ExpressSessionAuth: true,
    sigv4aSigningRegionSet: async () => undefined,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return classifying(client);
}

/** A DynamoDB client (plain AttributeValues: for the table's own administration). */
export function dynamoClient(connection: AwsConnection): DynamoDBClient {
  const client = new DynamoDBClient({
    ...common(connection, "dynamodb"),
    accountIdEndpointMode: "disabled",
    endpointDiscoveryEnabled: false,
  });
  return classifying(client);
}

/**
 * A DynamoDB client taking and giving plain JavaScript values (strings, numbers, bytes): the
 * connection's shared one if it shares them ({@link AwsConnection.shared}), else a new one.
 */
export function documentClient(connection: AwsConnection): DynamoDBDocumentClient {
  const { shared } = connection;
  if (shared?.dynamodb) return shared.dynamodb;
  const client = DynamoDBDocumentClient.from(dynamoClient(connection));
  if (shared) shared.dynamodb = client;
  return client;
}

/** Sendings of a batch while DynamoDB leaves part of it unprocessed (a throttled table), the first included. */
export const BATCH_SENDINGS = 8;

/**
 * Sends a batch (`send` sends what is pending and gives back what DynamoDB left unprocessed),
 * then what is left, until nothing is: the waits between sendings double from 100 ms up to a
 * second, so that all of them (about 4.5 s) fit well inside the function's 15 s.
 * @throws StorageUnavailableError when some of it is left after {@link BATCH_SENDINGS} sendings
 */
export async function untilProcessed<T>(
  batch: T[],
  send: (pending: T[]) => Promise<T[] | undefined>,
  what: string,
): Promise<void> {
  let pending: T[] | undefined = batch;
  for (let sending = 0; pending?.length; sending++) {
    if (sending === BATCH_SENDINGS) {
      throw new StorageUnavailableError(`DynamoDB left ${pending.length} ${what} unprocessed`);
    }
    if (sending > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** sending)));
    pending = await send(pending);
  }
}

/** Every item a query gives, its pages followed to the end. */
export async function queryAll(
  client: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, "ExclusiveStartKey">,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * A Secrets Manager client. Its module is loaded here, when first asked for (the share key is
 * read once per container): in the Lambda bundle it is a chunk a cold start does not load.
 */
export async function secretsClient(connection: AwsConnection): Promise<SecretsManagerClient> {
  const { SecretsManagerClient } = await import("@aws-sdk/client-secrets-manager");
  return classifying(new SecretsManagerClient(common(connection, "secretsmanager")));
}

/** The error name of an AWS service's answer (`NoSuchKey`, `ConditionalCheckFailedException`...), if it is one. */
export function awsErrorName(error: unknown): string | undefined {
  return error instanceof Error && "$metadata" in error ? error.name : undefined;
}
