/**
 * A search reader thread of {@link SearchThreads} on the AWS index: an {@link S3SearchIndex}
 * that only searches, with a copy folder of its own (never the writer's sparse copies). It reads
 * the pointer items itself (DynamoDB, the credentials asked of the owning thread unless fixed
 * ones were given) and asks the owning thread, by message, for blobs and stored lines: the
 * bucket is read through the owner's store, whatever it is.
 */
import { join } from "node:path";
import { workerData } from "node:worker_threads";
import type { BlobStore } from "@pisync/store";
import type { AwsConnection, AwsCredentials } from "@pisync/store/aws";
import type { LineSource } from "../port.js";
import { askOwner, serveSearches } from "../reader-thread.js";
import { S3SearchIndex, type S3SearchIndexConfig } from "./s3-search-index.js";

/** What the AWS reader is started with: serialisable settings only. */
export interface S3ReaderData extends Pick<S3SearchIndexConfig, "table" | "cacheBytes" | "chunkBytes" | "eagerBytes"> {
  /** The connection without what cannot cross threads (a credential source, shared clients). */
  connection: Omit<AwsConnection, "credentials" | "shared"> & { credentials?: AwsCredentials };
  /** The folder the threads' copy folders go in (`reader-N`, N the thread's slot). */
  cacheDir: string;
  /** The thread's slot (set by {@link SearchThreads}). */
  thread: number;
}

const data = workerData as S3ReaderData;
const onlyReads = () => Promise.reject(new Error("a search thread only reads the index"));
/** The bucket through the owning thread's store: blobs are moved here, never copied twice. */
const blobs: BlobStore = {
  get: (key, range) => askOwner("blob", key, range),
  put: onlyReads,
  delete: onlyReads,
  list: onlyReads,
  listObjects: onlyReads,
  uploadUrl: onlyReads,
};
const lines: LineSource = (...args) => askOwner("lines", ...args);
const index = new S3SearchIndex({
  connection: { ...data.connection, credentials: data.connection.credentials ?? (() => askOwner("credentials")) },
  table: data.table,
  blobs,
  lines,
  cacheDir: join(data.cacheDir, `reader-${data.thread}`),
  cacheBytes: data.cacheBytes,
  chunkBytes: data.chunkBytes,
  eagerBytes: data.eagerBytes,
});
serveSearches((userId, query, options) => index.search(userId, query, options));
