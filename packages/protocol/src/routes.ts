/** The route contracts: see `routes/index.ts` (one module per resource). */
export * from "./routes/index.js";
