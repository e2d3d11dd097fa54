/**
 * @pisync/store: the storage ports and their errors. Adapters live in the subpaths
 * `@pisync/store/embedded` (files + SQLite) and `@pisync/store/aws` (S3 + DynamoDB), so that a
 * Lambda bundle never carries SQLite and the one-machine server never needs the AWS SDK.
 */
export { NotFoundError, RevisionConflictError } from "./errors.js";
export type * from "./ports.js";
