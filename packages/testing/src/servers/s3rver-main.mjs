// Runs s3rver (an S3-compatible server) in its own process, behind a SigV4 check (s3rver
// checks no V4 signature). Started with `node --openssl-legacy-provider`: s3rver's list
// continuation tokens use DES.
// Usage: node --openssl-legacy-provider s3rver-main.mjs PORT DIR BUCKET...
import S3rver from "s3rver";
import { startSigV4Gate } from "./sigv4-gate.mjs";

const [port, directory, ...buckets] = process.argv.slice(2);
const server = new S3rver({
  port: 0,
  address: "127.0.0.1",
  directory,
  silent: true,
  configureBuckets: buckets.map((name) => ({ name })),
});
const { port: innerPort } = await server.run();
const gate = await startSigV4Gate(Number(port), `127.0.0.1:${innerPort}`);
process.stdout.write("ready\n");
process.on("SIGTERM", () => {
  gate.close();
  server.close().finally(() => process.exit(0));
});
