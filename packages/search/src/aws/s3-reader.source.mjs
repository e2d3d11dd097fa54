// A search reader thread of the AWS index when running from source (`npm start`, tests,
// scripts): s3-reader.ts through tsx. A built package loads s3-reader.js directly.
import { tsImport } from "tsx/esm/api";

await tsImport("./s3-reader.ts", import.meta.url);
