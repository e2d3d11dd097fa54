// Runs s3rver (an S3-compatible server) in its own process, behind a SigV4 check (s3rver
// checks no V4 signature). Started with `node --openssl-legacy-provider`: s3rver's list
// continuation tokens use DES.
// Usage: node --openssl-legacy-provider s3rver-main.mjs PORT DIR BUCKET...
import S3rver from "s3rver";
import { startSigV4Gate } from "./sigv4-gate.mjs";

const [port, directory, ...buckets] = process.argv.slice(2);
// Until it is ready, a failure (a port taken, a folder it cannot write) is its reason in one
// line, the one the test harness reports; after that, Node's own report.
const failedStart = (error) => {
  process.stderr.write(`${error?.message ?? error}\n`);
  process.exit(1);
};
process.on("uncaughtException", failedStart);
process.on("unhandledRejection", failedStart);
const server = new S3rver({
  port: 0,
  address: "127.0.0.1",
  directory,
  silent: true,
  configureBuckets: buckets.map((name) => ({ name })),
});
const { port: innerPort } = await server.run();
const gate = await startSigV4Gate(Number(port), `127.0.0.1:${innerPort}`);
process.off("uncaughtException", failedStart);
process.off("unhandledRejection", failedStart);
process.stdout.write("ready\n");
process.on("SIGTERM", () => {
  gate.close();
  server.close().finally(() => process.exit(0));
});
