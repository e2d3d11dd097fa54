/**
 * Signed HTTP for the AWS services pisync calls (S3, DynamoDB, Secrets Manager): SigV4 by
 * aws4fetch over the runtime's fetch, with the SDK's standard retry policy (3 attempts,
 * exponential backoff with full jitter, on network errors, 5xx and throttling). The SDK v3
 * clients weigh over 500 KB in a Lambda bundle; this, a few.
 */
import { AwsV4Signer } from "aws4fetch";

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
  /** Attempts per request, the first included (default 3). */
  maxAttempts?: number;
}

export type AwsService = "s3" | "dynamodb" | "secretsmanager";

/** An error answer from an AWS service, with its error code (`NoSuchKey`, `ThrottlingException`...). */
export class AwsError extends Error {
  override readonly name = "AwsError";
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    /** The parsed error body (JSON protocols), e.g. a transaction's CancellationReasons. */
    readonly details: Record<string, unknown> = {},
  ) {
    super(`${code}: ${message} (HTTP ${status})`);
  }
}

const THROTTLING = new Set([
  "ThrottlingException",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "SlowDown",
  "RequestThrottled",
]);

function isRetryable(error: unknown): boolean {
  if (error instanceof AwsError) return error.status >= 500 || error.status === 429 || THROTTLING.has(error.code);
  // fetch rejects with a TypeError when the connection fails.
  return error instanceof TypeError;
}

/** The service's base URL: the configured endpoint, or AWS's regional one. */
export function serviceEndpoint(connection: AwsConnection, service: AwsService): URL {
  return new URL(connection.endpoints?.[service] ?? `https://${service}.${connection.region}.amazonaws.com`);
}

async function credentialsOf(connection: AwsConnection): Promise<AwsCredentials> {
  return typeof connection.credentials === "function" ? connection.credentials() : connection.credentials;
}

export interface SignOptions {
  method: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Sign in the query string (a presigned URL) rather than in an Authorization header. */
  query?: boolean;
}

/** Signs a request: the URL (presigned when `query`) and the headers to send. */
export async function sign(connection: AwsConnection, service: AwsService, url: URL, options: SignOptions) {
  const { accessKeyId, secretAccessKey, sessionToken } = await credentialsOf(connection);
  return new AwsV4Signer({
    url: url.toString(),
    method: options.method,
    headers: options.headers,
    body: options.body as BodyInit | undefined,
    accessKeyId,
    secretAccessKey,
    sessionToken,
    service,
    region: connection.region,
    signQuery: options.query,
    // Presigned URLs sign every header given (a PUT's Content-Length: S3 refuses any other size).
    allHeaders: options.query,
  }).sign();
}

/**
 * Sends a signed request, retrying as the SDK does. `read` turns a response into a result or
 * throws an AwsError; it runs for every attempt, so a retryable error answer is retried.
 */
export async function send<T>(
  connection: AwsConnection,
  service: AwsService,
  url: URL,
  options: SignOptions,
  read: (response: Response) => Promise<T>,
): Promise<T> {
  const attempts = connection.maxAttempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      const signed = await sign(connection, service, url, options);
      const response = await fetch(signed.url, {
        method: signed.method,
        headers: signed.headers,
        body: signed.body as BodyInit | undefined,
      });
      return await read(response);
    } catch (error) {
      if (attempt >= attempts || !isRetryable(error)) throw error;
      // Full jitter on a 100 ms base, as the SDK's standard mode.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** attempt));
    }
  }
}

/** One call of an AWS JSON protocol (DynamoDB: 1.0, Secrets Manager: 1.1). */
export function jsonCall<T>(
  connection: AwsConnection,
  service: "dynamodb" | "secretsmanager",
  target: string,
  input: unknown,
): Promise<T> {
  const version = service === "dynamodb" ? "1.0" : "1.1";
  return send(
    connection,
    service,
    serviceEndpoint(connection, service),
    {
      method: "POST",
      headers: { "content-type": `application/x-amz-json-${version}`, "x-amz-target": target },
      body: JSON.stringify(input),
    },
    async (response) => {
      const text = await response.text();
      let body: Record<string, unknown> = {};
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        if (response.ok) throw new AwsError("InvalidResponse", "the answer is not JSON", response.status);
      }
      if (response.ok) return body as T;
      // `__type` is `com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException` or the bare name.
      const code = String(body.__type ?? response.headers.get("x-amzn-errortype") ?? "UnknownError")
        .split("#")
        .pop()
        ?.split(":")[0] as string;
      const message = String(body.message ?? body.Message ?? response.statusText);
      throw new AwsError(code, message, response.status, body);
    },
  );
}
