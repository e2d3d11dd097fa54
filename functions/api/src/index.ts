/** @pisync/api: the HTTP API, for Lambda and for one machine. */
export { type App, type AppDeps, type AppLimits, createApp, DEFAULT_LIMITS } from "./app.js";
export { defaultDataDir, lambdaConfig } from "./config.js";
export {
  ensureLocalToken,
  LOCAL_USER,
  linkAddressNote,
  localTokenPath,
  publicUrlOf,
  startNodeServer,
} from "./node.js";
export {
  type AwsStoreSettings,
  awsStoreSettings,
  checkAwsStores,
  type OpenStores,
  openAws,
  openEmbedded,
  StoreSettingsError,
} from "./node-stores.js";
export { DEFAULT_RATE_LIMITS, type RateLimits } from "./rate-limit.js";
