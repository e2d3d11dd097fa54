/**
 * Test harness: the app on a store pair (`@pisync/testing` opens them), users with tokens,
 * and a small client speaking the append protocol.
 */
import { gzipSync } from "node:zlib";
import { Tokens } from "@pisync/core";
import type { BlobStore, MetaStore, Stores } from "@pisync/store";
import { type AppLimits, createApp } from "../src/index.js";

/** Counts blob GETs, to hold reads to their budget. */
export function countingBlobs(blobs: BlobStore): BlobStore & { gets: number } {
  const counted = Object.create(blobs) as BlobStore & { gets: number };
  counted.gets = 0;
  counted.get = (key, range) => {
    counted.gets++;
    return blobs.get(key, range);
  };
  return counted;
}

/** Makes the n-th call of a method fail once (a crash between two steps). */
export function failing<T extends BlobStore | MetaStore>(target: T, method: keyof T, when: () => boolean): T {
  const wrapped = Object.create(target) as T;
  const original = (target[method] as (...args: unknown[]) => unknown).bind(target);
  (wrapped as Record<keyof T, unknown>)[method] = (...args: unknown[]) => {
    if (when()) return Promise.reject(new Error(`injected failure in ${String(method)}`));
    return original(...args);
  };
  return wrapped;
}

export function makeApp(stores: Stores, limits?: Partial<AppLimits>) {
  return createApp({ stores, limits, log: () => {} });
}

export async function userToken(stores: Stores, userId: string): Promise<string> {
  return (await new Tokens(stores.meta).create(userId, "test")).token;
}

type App = ReturnType<typeof makeApp>;

/** A client of one session, speaking the protocol over `app.request`. */
export function client(app: App, token: string) {
  const auth = { Authorization: `Bearer ${token}` };
  return {
    auth,
    head: (id: string) => app.request(`/v1/sessions/${id}`, { method: "HEAD", headers: auth }),
    patch: (id: string, offset: number | undefined, body: Uint8Array | string, extra: Record<string, string> = {}) =>
      app.request(`/v1/sessions/${id}`, {
        method: "PATCH",
        headers: { ...auth, ...(offset === undefined ? {} : { "Upload-Offset": String(offset) }), ...extra },
        body: typeof body === "string" ? body : (body as Uint8Array<ArrayBuffer>),
      }),
    patchGzip: (id: string, offset: number, body: Uint8Array) =>
      app.request(`/v1/sessions/${id}`, {
        method: "PATCH",
        headers: { ...auth, "Upload-Offset": String(offset), "Content-Encoding": "gzip" },
        body: gzipSync(body) as Uint8Array<ArrayBuffer>,
      }),
    put: (id: string, body: Uint8Array | string, extra: Record<string, string> = {}) =>
      app.request(`/v1/sessions/${id}`, {
        method: "PUT",
        headers: { ...auth, ...extra },
        body: typeof body === "string" ? body : (body as Uint8Array<ArrayBuffer>),
      }),
    get: (path: string, extra: Record<string, string> = {}) => app.request(path, { headers: { ...auth, ...extra } }),
    delete: (path: string) => app.request(path, { method: "DELETE", headers: auth }),
    post: (path: string, json: unknown) =>
      app.request(path, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify(json),
      }),
  };
}

export const enc = (text: string) => new TextEncoder().encode(text);

/** Asks until `done` holds of the answer (background work such as indexing: at most 10 s). */
export async function eventually<T>(ask: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    const answer = await ask();
    if (done(answer) || Date.now() > until) return answer;
    await new Promise((r) => setTimeout(r, 50));
  }
}
