// Runs s3rver (an S3-compatible server) in its own process. Started with
// `node --openssl-legacy-provider`: s3rver's list continuation tokens use DES.
// Usage: node --openssl-legacy-provider s3rver-main.mjs PORT DIR BUCKET...
import S3rver from "s3rver";

const [port, directory, ...buckets] = process.argv.slice(2);
const server = new S3rver({
  port: Number(port),
  address: "127.0.0.1",
  directory,
  silent: true,
  configureBuckets: buckets.map((name) => ({ name })),
});
await server.run();
process.stdout.write("ready\n");
process.on("SIGTERM", () => server.close().finally(() => process.exit(0)));
