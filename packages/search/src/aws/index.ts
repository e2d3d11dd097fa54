/**
 * The AWS search adapter: per-user SQLite FTS5 files in S3 behind a DynamoDB pointer
 * ({@link S3SearchIndex}), and the durable marks of sessions written since they were indexed
 * ({@link SearchMarks}).
 */
export { SearchMarks, type SessionMark } from "./marks.js";
export { S3SearchIndex, type S3SearchIndexConfig } from "./s3-search-index.js";
