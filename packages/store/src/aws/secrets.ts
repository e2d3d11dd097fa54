/** Secrets Manager: the one call pisync makes. */
import { type AwsConnection, secretsClient } from "./client.js";

/** The text of a secret (its `SecretString`, empty when it holds bytes). Throws the service's error. */
export async function readSecretString(connection: AwsConnection, secretId: string): Promise<string> {
  const client = await secretsClient(connection);
  const { GetSecretValueCommand } = await import("@aws-sdk/client-secrets-manager");
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    return SecretString ?? "";
  } finally {
    client.destroy();
  }
}
