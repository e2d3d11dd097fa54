/**
 * The AWS SDK v3 clients pisync calls (S3, DynamoDB, Secrets Manager), made from one
 * connection: where requests go and as whom. Retries are the SDK's standard mode (exponential
 * backoff with jitter on network errors, 5xx and throttling). Every setting the SDK would
 * otherwise look up in the environment and in `~/.aws/config` (file reads on a Lambda's first
 * request) is given here, and connections are kept open between requests.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import type { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

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
}

type Service = keyof NonNullable<AwsConnection["endpoints"]>;

/** The settings every client shares. */
function common(connection: AwsConnection, service: Service) {
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
    requestHandler: { httpAgent: { keepAlive: true }, httpsAgent: { keepAlive: true } },
  };
}

/**
 * An S3 client. Checksums only where S3 requires them: pisync sends Content-MD5 itself, and a
 * default CRC32 would be signed into presigned upload URLs (the upload's body has another).
 */
export function s3Client(connection: AwsConnection): S3Client {
  return new S3Client({
    ...common(connection, "s3"),
    forcePathStyle: connection.s3PathStyle ?? false,
    useArnRegion: false,
    disableS3ExpressSessionAuth: true,
    sigv4aSigningRegionSet: async () => undefined,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

/** A DynamoDB client (plain AttributeValues: for the table's own administration). */
export function dynamoClient(connection: AwsConnection): DynamoDBClient {
  return new DynamoDBClient({
    ...common(connection, "dynamodb"),
    accountIdEndpointMode: "disabled",
    endpointDiscoveryEnabled: false,
  });
}

/** A DynamoDB client taking and giving plain JavaScript values (strings, numbers, bytes). */
export function documentClient(connection: AwsConnection): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(dynamoClient(connection));
}

/**
 * A Secrets Manager client. Its module is loaded here, when first asked for (the share key is
 * read once per container): in the Lambda bundle it is a chunk a cold start does not load.
 */
export async function secretsClient(connection: AwsConnection): Promise<SecretsManagerClient> {
  const { SecretsManagerClient } = await import("@aws-sdk/client-secrets-manager");
  return new SecretsManagerClient(common(connection, "secretsmanager"));
}

/** The error name of an AWS service's answer (`NoSuchKey`, `ConditionalCheckFailedException`...), if it is one. */
export function awsErrorName(error: unknown): string | undefined {
  return error instanceof Error && "$metadata" in error ? error.name : undefined;
}
