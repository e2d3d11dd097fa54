// A search reader thread when running from source (`npm start`, tests, scripts):
// embedded-reader.ts through tsx. A built package loads embedded-reader.js directly.
import { tsImport } from "tsx/esm/api";

await tsImport("./embedded-reader.ts", import.meta.url);
