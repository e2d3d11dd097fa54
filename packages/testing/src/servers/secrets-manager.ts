/**
 * A Secrets Manager stand-in for tests: GetSecretValue over the JSON 1.1 protocol, with each
 * request's SigV4 signature checked by the AWS SDK's own signer. There is no local Secrets
 * Manager from Amazon; this speaks the one call pisync makes.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { checkSigV4 } from "./sigv4-gate.mjs";

export interface SecretsManagerStandIn {
  endpoint: string;
  /** How many GetSecretValue calls were answered. */
  reads: () => number;
  close: () => Promise<void>;
}

export async function startSecretsManager(secrets: Record<string, string>): Promise<SecretsManagerStandIn> {
  let reads = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      const body = Buffer.concat(chunks);
      const answer = (status: number, value: object) => {
        response.writeHead(status, { "content-type": "application/x-amz-json-1.1" });
        response.end(JSON.stringify(value));
      };
      const problem = await checkSigV4(request, body);
      if (problem) return answer(400, { __type: "UnrecognizedClientException", message: problem.join(": ") });
      if (request.headers["x-amz-target"] !== "secretsmanager.GetSecretValue") {
        return answer(400, { __type: "UnknownOperationException", message: "only GetSecretValue is served" });
      }
      const { SecretId } = JSON.parse(body.toString("utf8")) as { SecretId?: string };
      const value = SecretId === undefined ? undefined : secrets[SecretId];
      if (value === undefined) {
        return answer(400, { __type: "ResourceNotFoundException", message: "Secrets Manager can't find the secret" });
      }
      reads++;
      answer(200, { ARN: SecretId, Name: SecretId, SecretString: value });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    reads: () => reads,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
