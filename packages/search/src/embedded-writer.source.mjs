// The search writer thread when running from source (`npm start`, tests, scripts):
// embedded-writer.ts through tsx. A built package loads embedded-writer.js directly.
import { tsImport } from "tsx/esm/api";

await tsImport("./embedded-writer.ts", import.meta.url);
