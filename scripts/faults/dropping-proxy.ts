/**
 * A proxy in front of DynamoDB Local that forwards every request and, for a share of
 * `TransactWriteItems` (the `X-Amz-Target` header), loses the answer: after DynamoDB applied
 * the transaction (the client's socket is destroyed once the answer is in), or, optionally,
 * before (the socket is destroyed and nothing is forwarded). A lost answer is what a client sees
 * when a network or a load balancer fails between a service and its caller. A transaction picked
 * stays picked for `stickyMs`: the SDK's retries of it (the same body, the same idempotency
 * token) lose their answers too, as in a partition of a few seconds, so that every attempt of a
 * commit can fail after it was applied.
 */
import { createHash } from "node:crypto";
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { freePort } from "@pisync/testing/servers";

export interface DroppingProxyOptions {
  /** Share of transactions whose answer is lost after they were applied (0..1). */
  afterApply: number;
  /** Share of transactions lost before they reach DynamoDB (0..1). */
  beforeApply?: number;
  /** How long a picked transaction's retries are dropped too (default 2 s; 0: each attempt rolls anew). */
  stickyMs?: number;
  random?: () => number;
}

/** What the proxy did, counted since it started. */
export interface ProxyCounts {
  requests: number;
  transactions: number;
  /** Distinct transactions (by body) picked to lose their answers after apply. */
  pickedAfterApply: number;
  /** Attempts whose answer was lost after apply (a picked transaction's retries included). */
  droppedAfterApply: number;
  droppedBeforeApply: number;
  /** Requests DynamoDB did not answer (stopped or killed): the client's socket was cut. */
  upstreamFailures: number;
}

export interface DroppingProxy {
  endpoint: string;
  counts: ProxyCounts;
  /** Sets the shares (e.g. 0 while the checks read). */
  setRates(afterApply: number, beforeApply?: number): void;
  close(): Promise<void>;
}

/** Starts the proxy on a free loopback port, forwarding to `target` (`http://host:port`). */
export async function droppingProxy(target: string, options: DroppingProxyOptions): Promise<DroppingProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const random = options.random ?? Math.random;
  const stickyMs = options.stickyMs ?? 2000;
  /** Picked transactions' body hashes, until when their retries are dropped too. */
  const picked = new Map<string, number>();
  let afterApply = options.afterApply;
  let beforeApply = options.beforeApply ?? 0;
  const counts: ProxyCounts = {
    requests: 0,
    transactions: 0,
    pickedAfterApply: 0,
    droppedAfterApply: 0,
    droppedBeforeApply: 0,
    upstreamFailures: 0,
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    counts.requests++;
    const transaction = String(req.headers["x-amz-target"] ?? "").endsWith(".TransactWriteItems");
    let fate: "forward" | "after" | "before" = "forward";
    if (transaction) {
      counts.transactions++;
      const body = createHash("sha256").update(Buffer.concat(chunks)).digest("hex");
      const now = Date.now();
      for (const [hash, until] of picked) if (until < now) picked.delete(hash);
      const roll = random();
      if (picked.has(body)) fate = "after";
      else if (roll < beforeApply) fate = "before";
      else if (roll < beforeApply + afterApply) {
        fate = "after";
        counts.pickedAfterApply++;
        if (stickyMs) picked.set(body, now + stickyMs);
      }
    }
    if (fate === "before") {
      counts.droppedBeforeApply++;
      return void req.socket.destroy();
    }
    const forwarded = request({
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: req.headers,
      agent,
    });
    forwarded.on("response", (answer) => {
      const body: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => body.push(chunk));
      answer.on("end", () => {
        if (fate === "after") {
          counts.droppedAfterApply++;
          return void req.socket.destroy();
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
      });
      answer.on("error", () => {
        counts.upstreamFailures++;
        req.socket.destroy();
      });
    });
    forwarded.on("error", () => {
      counts.upstreamFailures++;
      req.socket.destroy();
    });
    forwarded.end(Buffer.concat(chunks));
  };

  const port = await freePort();
  const server = createServer((req, res) => void handle(req, res).catch(() => req.socket.destroy()));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts,
    setRates(after, before = 0) {
      afterApply = after;
      beforeApply = before;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
