/**
 * Concurrent writers that append realistic pi lines at their acknowledged offsets, each to
 * sessions of its own and now and then to one session they all share, retrying as a good client
 * does: a lost connection sends the same bytes at the same offset again; a 409 reads the
 * committed length and sends them there; 429, 503 and 507 wait out `Retry-After`.
 */
import { HEADERS } from "@pisync/protocol";
import { LineMaker, seeded } from "./lines.js";
import { SessionModel } from "./model.js";
import { BAD_FAILURES, classify, ResponseCounts } from "./responses.js";

export interface WritersOptions {
  url: string;
  token: string;
  writers: number;
  /** Pause after each acknowledged append, in ms (keeps the Node server's per-address limit in sight). */
  thinkMs: number;
  /** Share of appends that go to the shared session. */
  sharedShare: number;
  /** A request with no answer after this long is abandoned and sent again. */
  requestTimeoutMs: number;
  /** Longest wait a `Retry-After` is honoured for. */
  maxRetryAfterMs: number;
  /** An append unanswered (or waiting out 503/507/429) for this long is given up: its bytes may or may not be stored. */
  giveUpMs: number;
  /** An append answered only with 500s (or 5xx without Retry-After) for this long is given up sooner. */
  giveUpOnErrorsMs: number;
  seed: number;
}

interface WriteResponse {
  status: number;
  retryAfter: boolean;
  retryAfterMs: number;
  offset: number | undefined;
  code: string | undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The writers of one run; see the module's comment. */
export class Writers {
  readonly sessions: SessionModel[] = [];
  readonly shared: SessionModel;
  /** Answers of the current phase (replaced by {@link phase}). */
  answers = new ResponseCounts();
  /** What went wrong that no retry can fix (a head behind what it acknowledged, a refused append). */
  readonly anomalies: string[] = [];
  /** Times of acknowledged appends (ms since the epoch), for restart-to-healthy times. */
  private readonly acks: number[] = [];
  /** PATCH requests sent and not yet answered. */
  inFlight = 0;
  private stopping = false;
  private pausing = false;
  private idle = 0;
  private waiters: (() => void)[] = [];
  private loops: Promise<void>[] = [];
  private readonly random: () => number;

  constructor(private readonly options: WritersOptions) {
    this.shared = new SessionModel(`shared-${options.seed}`, true);
    this.random = seeded(options.seed);
  }

  /** Creates the shared session, then starts every writer. */
  async start(): Promise<void> {
    const maker = new LineMaker(255, this.options.seed);
    await this.deliver(this.shared, Buffer.from(maker.header(this.shared.id)));
    this.sessions.push(this.shared);
    for (let w = 0; w < this.options.writers; w++) this.loops.push(this.loop(w));
  }

  /** Starts counting answers afresh (a new phase of the run); answers the previous counts. */
  phase(): ResponseCounts {
    const previous = this.answers;
    this.answers = new ResponseCounts();
    return previous;
  }

  /**
   * Resolves once every writer has finished the append it was making and waits, or after
   * `timeoutMs`; answers how many were still busy then.
   */
  async pause(timeoutMs: number): Promise<number> {
    this.pausing = true;
    const deadline = Date.now() + timeoutMs;
    while (this.idle < this.loops.length && Date.now() < deadline) await sleep(20);
    return this.loops.length - this.idle;
  }

  resume(): void {
    this.pausing = false;
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Stops the writers once their current append is answered. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.resume();
    await Promise.all(this.loops);
  }

  /** Milliseconds from `since` to the first append acknowledged after it (undefined when none came within `timeoutMs`). */
  async firstAckAfter(since: number, timeoutMs: number): Promise<number | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const ack = this.acks.find((t) => t >= since);
      if (ack !== undefined) return ack - since;
      await sleep(20);
    }
    return undefined;
  }

  private async loop(writer: number): Promise<void> {
    const maker = new LineMaker(writer, this.options.seed);
    let own: SessionModel | undefined;
    while (!this.stopping) {
      if (this.pausing) {
        this.idle++;
        await new Promise<void>((wake) => this.waiters.push(wake));
        this.idle--;
        continue;
      }
      if (!own || own.broken) {
        own = new SessionModel(`w${writer}-${this.options.seed}-${this.sessions.length}`);
        this.sessions.push(own);
        await this.deliver(own, Buffer.from(maker.header(own.id)));
        continue;
      }
      const session = this.random() < this.options.sharedShare && !this.shared.broken ? this.shared : own;
      const { body, last } = maker.turn(session.last);
      if (await this.deliver(session, Buffer.from(body))) session.last = last;
      await sleep(this.options.thinkMs * (0.5 + this.random()));
    }
  }

  /**
   * Appends `body` to `session` at the offset it believes is committed, until it is
   * acknowledged (true) or the session is found broken (false).
   */
  private async deliver(session: SessionModel, body: Buffer): Promise<boolean> {
    let offset = session.end;
    let lost = 0;
    const giveUpAt = Date.now() + this.options.giveUpMs;
    /** Since when every answer was a server error (a bug's answer, not an outage's), if it was. */
    let errorsSince: number | undefined;
    while (!session.broken) {
      const now = Date.now();
      if (now > giveUpAt || (errorsSince !== undefined && now - errorsSince > this.options.giveUpOnErrorsMs)) {
        session.uncertain = { offset, bytes: body };
        const why =
          errorsSince === undefined
            ? `${this.options.giveUpMs / 1000} s of retries`
            : `${((now - errorsSince) / 1000).toFixed(0)} s of server errors`;
        session.broken = `no acknowledgement after ${why}`;
        break;
      }
      const answer = await this.patch(session.id, offset, body);
      const responseClass = classify(answer);
      this.answers.add(responseClass, answer && answer.status >= 400 ? `${answer.status} ${answer.code}` : undefined);
      if (!BAD_FAILURES.includes(responseClass)) errorsSince = undefined;
      else errorsSince ??= Date.now();
      if (!answer) {
        // No answer: the same bytes at the same offset (the server tells a retry from an append).
        await sleep(Math.min(2000, 100 * 2 ** lost++) * (0.5 + this.random()));
        continue;
      }
      lost = 0;
      if (responseClass === "2xx") {
        session.acknowledge(offset, body);
        this.acks.push(Date.now());
        return true;
      }
      if (answer.status === 409) {
        const committed = answer.offset ?? (await this.head(session.id));
        if (committed === undefined) continue;
        if (session.shared) {
          // Another writer's append may have been acknowledged since this answer was made: a
          // committed length behind it is stale, not a loss (the checks find a real one).
          offset = Math.max(committed, session.end);
        } else if (committed < session.end) {
          session.broken = `409 at ${offset}: the server's ${committed} bytes are behind the ${session.end} it acknowledged`;
        } else {
          session.broken = `409 at ${offset}: the server holds ${committed} bytes, ${committed - session.end} it never acknowledged`;
        }
        continue;
      }
      if (answer.status >= 500 || answer.status === 429) {
        await sleep((answer.retryAfter ? answer.retryAfterMs : 500) * (0.5 + this.random()));
        continue;
      }
      session.broken = `${answer.status} ${answer.code} at ${offset}`;
    }
    this.anomalies.push(`${session.id}: ${session.broken}`);
    return false;
  }

  private async patch(id: string, offset: number, body: Buffer): Promise<WriteResponse | undefined> {
    this.inFlight++;
    const started = Date.now();
    try {
      return await this.request("PATCH", id, { [HEADERS.uploadOffset]: String(offset) }, body);
    } finally {
      this.inFlight--;
      this.answers.took(Date.now() - started);
    }
  }

  /** The committed length (`Upload-Offset` of HEAD), undefined when the session cannot be read now. */
  private async head(id: string): Promise<number | undefined> {
    const answer = await this.request("HEAD", id, {});
    return answer?.status === 200 ? answer.offset : undefined;
  }

  private async request(
    method: string,
    id: string,
    headers: Record<string, string>,
    body?: Buffer,
  ): Promise<WriteResponse | undefined> {
    try {
      const response = await fetch(`${this.options.url}/v1/sessions/${id}`, {
        method,
        headers: { Authorization: `Bearer ${this.options.token}`, "Content-Type": "application/x-ndjson", ...headers },
        body: body ? new Uint8Array(body) : undefined,
        signal: AbortSignal.timeout(this.options.requestTimeoutMs),
      });
      const text = await response.text();
      const retryAfter = response.headers.get("retry-after");
      const offset = response.headers.get(HEADERS.uploadOffset);
      let code: string | undefined;
      try {
        code = (JSON.parse(text) as { code?: string }).code;
      } catch {}
      return {
        status: response.status,
        retryAfter: retryAfter !== null && /^\d+$/.test(retryAfter),
        retryAfterMs: Math.max(200, Math.min(this.options.maxRetryAfterMs, Number(retryAfter ?? 0) * 1000)),
        offset: offset === null ? undefined : Number(offset),
        code,
      };
    } catch {
      return undefined;
    }
  }
}
