import type { IncomingMessage, Server } from "node:http";

/** Why a request's signature is wrong, as [error code, message], or undefined when it is right. */
export function checkSigV4(request: IncomingMessage, body: Buffer): Promise<[string, string] | undefined>;
/** Listens on `port` and forwards checked requests, unchanged, to `target` (host:port). */
export function startSigV4Gate(port: number, target: string): Promise<Server>;
