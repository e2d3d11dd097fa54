// SigV4 checks for test servers that make none (s3rver; a Secrets Manager stand-in): every
// request must be signed (Authorization header or presigned query) with the test secret, and a
// presigned URL must not have expired. The signature is recomputed with the AWS SDK's own signer
// (@smithy/signature-v4), an implementation independent of the adapter's.
import { createHash, createHmac } from "node:crypto";
import { createServer, request as forward } from "node:http";
import { SignatureV4 } from "@smithy/signature-v4";

const SECRETS = { S3RVER: "S3RVER" };

class Sha256 {
  constructor(secret) {
    this.hash = secret ? createHmac("sha256", secret) : createHash("sha256");
  }
  update(data) {
    this.hash.update(data);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

/** `20261129T150000Z` → Date. */
const amzDate = (text) =>
  new Date(`${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 11)}:${text.slice(11, 13)}:${text.slice(13)}`);

function refuse(response, code, message) {
  response.writeHead(403, { "content-type": "application/xml" });
  response.end(
    `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`,
  );
}

/**
 * Why a request's signature is wrong, as [S3 error code, message], or undefined when it is
 * right. `body` is the request's whole body (its hash is signed, except S3's UNSIGNED-PAYLOAD).
 */
const PRESIGN_PARAMETERS = new Set([
  "X-Amz-Algorithm",
  "X-Amz-Credential",
  "X-Amz-Date",
  "X-Amz-Expires",
  "X-Amz-SignedHeaders",
  "X-Amz-Signature",
  "X-Amz-Security-Token",
]);

export async function checkSigV4(request, body) {
  const url = new URL(request.url, "http://gate");
  const presigned = url.searchParams.get("X-Amz-Signature");
  let credential;
  let signedHeaders;
  let provided;
  let date;
  if (presigned) {
    credential = url.searchParams.get("X-Amz-Credential") ?? "";
    signedHeaders = url.searchParams.get("X-Amz-SignedHeaders") ?? "";
    provided = presigned;
    date = url.searchParams.get("X-Amz-Date") ?? "";
  } else {
    const match = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(
      request.headers.authorization ?? "",
    );
    if (!match) return ["AccessDenied", "the request is not signed with SigV4"];
    [, credential, signedHeaders, provided] = match;
    date = request.headers["x-amz-date"] ?? "";
  }
  const [accessKeyId, , region, service] = credential.split("/");
  const secretAccessKey = SECRETS[accessKeyId];
  if (!secretAccessKey) return ["InvalidAccessKeyId", "unknown access key"];
  const headers = {};
  for (const name of signedHeaders.split(";")) headers[name] = String(request.headers[name] ?? "");
  // A presigned URL's signature covers every query parameter but itself; the signer adds back
  // the ones it sets (algorithm, credential, date, expiry, signed headers, session token).
  const query = {};
  for (const [name, value] of url.searchParams) {
    if (!presigned || !PRESIGN_PARAMETERS.has(name)) query[name] = value;
  }
  const signer = new SignatureV4({
    service,
    region,
    // Temporary credentials (a role's, as in Lambda) carry a session token, signed with the rest.
    credentials: {
      accessKeyId,
      secretAccessKey,
      sessionToken: url.searchParams.get("X-Amz-Security-Token") ?? request.headers["x-amz-security-token"],
    },
    sha256: Sha256,
    // S3 paths are signed as sent; other services' are escaped once more.
    uriEscapePath: service !== "s3",
    // Sign exactly the headers the request says it signed (no added x-amz-content-sha256).
    applyChecksum: false,
  });
  const toSign = {
    method: request.method,
    protocol: "http:",
    hostname: "gate",
    path: url.pathname,
    query,
    headers,
    body,
  };
  const signingDate = amzDate(date);
  if (presigned) {
    const expiresIn = Number(url.searchParams.get("X-Amz-Expires"));
    if (Date.now() > signingDate.getTime() + expiresIn * 1000) return ["AccessDenied", "Request has expired"];
    // Presigned S3 URLs sign no payload (as the SDK's presigner does).
    toSign.headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD";
    const expected = await signer.presign(toSign, {
      signingDate,
      expiresIn,
      unsignableHeaders: new Set(["x-amz-content-sha256"]),
      unhoistableHeaders: new Set(["x-amz-content-sha256"]),
    });
    if (expected.query["X-Amz-Signature"] !== provided) return ["SignatureDoesNotMatch", "presigned URL mismatch"];
  } else {
    const expected = await signer.sign(toSign, { signingDate });
    if (!expected.headers.authorization.endsWith(`Signature=${provided}`)) {
      return ["SignatureDoesNotMatch", "signature mismatch"];
    }
  }
  return undefined;
}

/** Listens on `port` and forwards checked requests, unchanged, to `target` (host:port). */
export function startSigV4Gate(port, target) {
  const [host, targetPort] = target.split(":");
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", async () => {
      const body = Buffer.concat(chunks);
      const problem = await checkSigV4(request, body).catch((error) => ["SignatureDoesNotMatch", String(error)]);
      if (problem) return refuse(response, ...problem);
      const upstream = forward(
        { host, port: Number(targetPort), method: request.method, path: request.url, headers: request.headers },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on("error", () => response.destroy());
      upstream.end(body);
    });
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}
