/** Secrets Manager: the one call pisync makes. */
import { GetSecretValueCommand } from "@aws-sdk/client-secrets-manager";
import { type AwsConnection, secretsClient } from "./client.js";

/** The text of a secret (its `SecretString`, empty when it holds bytes). Throws the service's error. */
export async function readSecretString(connection: AwsConnection, secretId: string): Promise<string> {
  const client = secretsClient(connection);
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    return SecretString ?? "";
  } finally {
    client.destroy();
  }
}
