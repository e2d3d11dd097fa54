/**
 * `S3BlobStore` against a server whose answers fail on purpose inside a 200: the SDK retries a
 * request until its answer's headers come, and the body is read after, so a body that breaks
 * off, falls silent or comes short is the store's to notice. It reads once more, then answers
 * `StorageUnavailableError` (a 503 to clients), never a part of the bytes as if it were all.
 * A DeleteObjects answer listing keys S3 failed to delete is an outage too, unless S3 refused.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { S3BlobStore } from "../src/aws/index.js";
import { StorageUnavailableError } from "../src/index.js";

/** The object every answer is cut from. */
const OBJECT = new Uint8Array(1000).map((_, i) => i % 251);

type Step = (response: ServerResponse, range: { first: number; last: number } | undefined) => void;
let steps: Step[] = [];
let calls = 0;
const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  request.resume();
  const asked = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? "");
  const range = asked ? { first: Number(asked[1]), last: Math.min(Number(asked[2]), OBJECT.length - 1) } : undefined;
  (steps[calls++] ?? whole)(response, range);
});

/** The answer S3 gives: the object, or the part of it asked for. */
const whole: Step = (response, range) => {
  if (!range) {
    response.writeHead(200, { "content-length": String(OBJECT.length) });
    response.end(OBJECT);
    return;
  }
  const part = OBJECT.subarray(range.first, range.last + 1);
  response.writeHead(206, {
    "content-length": String(part.length),
    "content-range": `bytes ${range.first}-${range.last}/${OBJECT.length}`,
  });
  response.end(part);
};
/** The whole object, whatever range was asked for: with Content-Range (a server misreading `bytes=0-0`), or as a 200 without. */
const wholeRange: Step = (response) => {
  response.writeHead(206, {
    "content-length": String(OBJECT.length),
    "content-range": `bytes 0-${OBJECT.length - 1}/${OBJECT.length}`,
  });
  response.end(OBJECT);
};
const ignoresRange: Step = (response) => whole(response, undefined);
/** The part asked for, as a 206 that does not say which part it is. */
const unnamedPart: Step = (response, range) => {
  const part = OBJECT.subarray(range?.first ?? 0, (range?.last ?? OBJECT.length - 1) + 1);
  response.writeHead(206, { "content-length": String(part.length) });
  response.end(part);
};
/** Headers announcing the whole object, half of it, then the connection closed. */
const brokenOff: Step = (response) => {
  response.writeHead(200, { "content-length": String(OBJECT.length) });
  response.write(OBJECT.subarray(0, 500));
  setTimeout(() => response.socket?.destroy(), 10);
};
/** Headers announcing the whole object, half of it, then silence. */
const silent: Step = (response) => {
  response.writeHead(200, { "content-length": String(OBJECT.length) });
  response.write(OBJECT.subarray(0, 500));
};
/** A range answer whose headers agree with its body, stopping halfway through the range asked for. */
const shortRange: Step = (response, range) => {
  const first = range?.first ?? 0;
  const last = first + Math.floor(((range?.last ?? OBJECT.length - 1) - first) / 2);
  response.writeHead(206, {
    "content-length": String(last - first + 1),
    "content-range": `bytes ${first}-${last}/${OBJECT.length}`,
  });
  response.end(OBJECT.subarray(first, last + 1));
};

/** A DeleteObjects answer (a 200) listing its first key as not deleted, with `code`. */
const notDeleted =
  (code: string): Step =>
  (response) => {
    response.writeHead(200, { "content-type": "application/xml" });
    response.end(
      `<?xml version="1.0" encoding="UTF-8"?><DeleteResult><Error><Key>k</Key><Code>${code}</Code><Message>${code}</Message></Error></DeleteResult>`,
    );
  };

let blobs: S3BlobStore;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  blobs = new S3BlobStore(
    {
      region: "us-east-1",
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
      endpoints: { s3: `http://127.0.0.1:${port}` },
      s3PathStyle: true,
      // Silence ends an attempt after a second: long enough for a busy machine's answers.
      timeouts: { s3: { connectMs: 1000, idleMs: 1000 } },
    },
    "bucket",
  );
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

/** `get` with the server answering `script` (then whole answers). */
async function get(script: Step[], range?: { start: number; end: number }) {
  steps = script;
  calls = 0;
  try {
    return { bytes: await blobs.get("k", range), calls };
  } catch (error) {
    return { error, calls };
  }
}

it("reads whole answers as they are, and a range past the object's end as the part that exists", async () => {
  expect(await get([])).toEqual({ bytes: OBJECT, calls: 1 });
  expect(await get([], { start: 100, end: 300 })).toEqual({ bytes: OBJECT.subarray(100, 300), calls: 1 });
  expect(await get([], { start: 900, end: 1200 })).toEqual({ bytes: OBJECT.subarray(900), calls: 1 });
});

it("gives the range asked for when an answer covers more of the object", async () => {
  for (const more of [wholeRange, ignoresRange]) {
    expect(await get([more], { start: 0, end: 1 })).toEqual({ bytes: OBJECT.subarray(0, 1), calls: 1 });
    expect(await get([more], { start: 100, end: 300 })).toEqual({ bytes: OBJECT.subarray(100, 300), calls: 1 });
    expect(await get([more], { start: 900, end: 1200 })).toEqual({ bytes: OBJECT.subarray(900), calls: 1 });
  }
});

it("reads once more when a body breaks off, falls silent or stops short of the range, and gives the whole", async () => {
  for (const cut of [brokenOff, silent]) expect(await get([cut])).toEqual({ bytes: OBJECT, calls: 2 });
  expect(await get([shortRange], { start: 100, end: 900 })).toEqual({ bytes: OBJECT.subarray(100, 900), calls: 2 });
});

it("answers StorageUnavailableError, not a part of the bytes, when the second body is cut too", async () => {
  for (const [cut, range] of [
    [brokenOff, undefined],
    [silent, undefined],
    [shortRange, { start: 100, end: 900 }],
    [unnamedPart, { start: 100, end: 300 }],
  ] as const) {
    const { error, calls: made } = await get([cut, cut], range);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as Error).message).toMatch(/answer for k was cut short/);
    expect(made).toBe(2);
  }
});

it("a delete whose answer lists a key S3 failed to delete is StorageUnavailableError; one S3 refused is not", async () => {
  for (const code of ["InternalError", "SlowDown"]) {
    steps = [notDeleted(code)];
    calls = 0;
    await expect(blobs.delete(["k"])).rejects.toThrow(StorageUnavailableError);
  }
  steps = [notDeleted("AccessDenied")];
  calls = 0;
  const refused = await blobs.delete(["k"]).catch((error: Error) => error);
  expect(refused).toBeInstanceOf(Error);
  expect(refused).not.toBeInstanceOf(StorageUnavailableError);
  expect((refused as Error).message).toBe("could not delete k: AccessDenied AccessDenied");
});
