/**
 * Large-line uploads: a line too large for one request is PUT beforehand (straight to S3 by a
 * presigned URL, or to the API where the store has none), then appended by its upload id.
 * Every upload needs its ticket: made by its user for one session, with the line's length and
 * SHA-256, kept beside the bytes (`<upload>.ticket`). Bytes of another length or hash are never
 * kept, nor appended; what no append claims is removed after a day (`sweep`, and on AWS the
 * bucket's lifecycle rule).
 */
import { createHash, randomBytes } from "node:crypto";
import { UPLOAD_ID, USER_LIMITS } from "@pisync/protocol";
import { type BlobStore, NotFoundError, PREFIXES, uploadKey } from "@pisync/store";
import { BadRequest, NotFound, TooMany } from "./errors.js";
import { checkSessionId } from "./keys.js";

/** How long an upload URL works. */
const UPLOAD_SECONDS = 900;

/** How long an upload no append has claimed is kept. */
export const UPLOAD_MAX_AGE_MS = 24 * 3600 * 1000;

/** Where to PUT an upload's bytes: `url` is undefined when the API itself takes them. */
export interface UploadTicket {
  uploadId: string;
  url?: string;
  expiresAt: string;
}

/** What a ticket promises, as kept beside the bytes. */
interface TicketRecord {
  sessionId: string;
  length: number;
  sha256: string;
  createdAt: string;
  expiresAt: string;
}

const ticketKey = (userId: string, uploadId: string) => `${uploadKey(userId, uploadId)}.ticket`;

/** Large-line uploads of a user: create, store, take into an append, discard; and the sweep of old ones. */
export class Uploads {
  constructor(
    private readonly blobs: BlobStore,
    /** The largest line an upload may hold. */
    readonly maxBytes: number,
    private readonly clock: () => Date = () => new Date(),
    /** What one user may hold open at once (tickets, and the bytes they declare). */
    private readonly bounds: { openUploads: number; openUploadBytes: number } = USER_LIMITS,
  ) {}

  /**
   * A new upload of `length` bytes whose SHA-256 is `sha256`, for a line of `sessionId` (which
   * may not exist yet: a large line may be its first).
   * @throws BadRequest `invalid_session_id`, `upload_too_large`; TooMany `too_many_uploads`
   */
  async create(userId: string, sessionId: string, length: number, sha256: string): Promise<UploadTicket> {
    checkSessionId(sessionId);
    if (length > this.maxBytes) {
      throw new BadRequest(`an upload is at most ${this.maxBytes} bytes`, "upload_too_large", {
        maxBytes: this.maxBytes,
      });
    }
    // Each ticket lets bytes be kept for a day: a user holds a bounded number, and bytes, at once.
    const open = await this.open(userId);
    const { openUploads, openUploadBytes } = this.bounds;
    if (open.count + 1 > openUploads || open.bytes + length > openUploadBytes) {
      throw new TooMany(
        `at most ${openUploads} uploads of ${openUploadBytes} bytes in all are open at once: append or wait for them, then try again`,
        "too_many_uploads",
        60,
        { maxUploads: openUploads, maxUploadBytes: openUploadBytes },
      );
    }
    const uploadId = randomBytes(16).toString("hex");
    const now = this.clock().getTime();
    const expiresAt = new Date(now + UPLOAD_SECONDS * 1000).toISOString();
    const record: TicketRecord = { sessionId, length, sha256, createdAt: new Date(now).toISOString(), expiresAt };
    await this.blobs.put(ticketKey(userId, uploadId), new TextEncoder().encode(JSON.stringify(record)));
    const url = await this.blobs.uploadUrl(uploadKey(userId, uploadId), UPLOAD_SECONDS, length);
    return { uploadId, url, expiresAt };
  }

  /**
   * The length a PUT of `uploadId` must have: its ticket's, while the ticket's URL time lasts.
   * @throws NotFound without a ticket of this user (or past its time); BadRequest `invalid_upload_id`
   */
  async expectedLength(userId: string, uploadId: string): Promise<number> {
    return (await this.openTicket(userId, uploadId)).length;
  }

  /**
   * Stores an upload's bytes (where the store has no presigned URL), once they match the ticket.
   * @throws NotFound without a valid ticket; BadRequest `invalid_upload_id`, `upload_mismatch`
   */
  async put(userId: string, uploadId: string, body: Uint8Array): Promise<void> {
    Uploads.match(await this.openTicket(userId, uploadId), body);
    await this.blobs.put(uploadKey(userId, uploadId), body);
  }

  /**
   * The bytes of an upload for an append to `sessionId`, checked against the ticket again (a
   * presigned PUT is checked by S3 for its length only): bytes that do not match are removed.
   * @throws NotFound when missing, expired, or another session's; BadRequest `invalid_upload_id`, `upload_mismatch`
   */
  async take(userId: string, uploadId: string, sessionId: string): Promise<Uint8Array> {
    const ticket = await this.ticket(userId, uploadId);
    if (ticket.sessionId !== sessionId) throw new NotFound("no such upload for this session");
    const bytes = await this.read(uploadKey(userId, uploadId));
    try {
      Uploads.match(ticket, bytes);
    } catch (error) {
      await this.discard(userId, uploadId);
      throw error;
    }
    return bytes;
  }

  /** Removes an upload and its ticket once appended; a failure only leaves them to the sweep. */
  async discard(userId: string, uploadId: string): Promise<void> {
    const id = Uploads.check(uploadId);
    await this.blobs.delete([uploadKey(userId, id), ticketKey(userId, id)]).catch(() => {});
  }

  /**
   * Removes every upload no append claimed within `maxAgeMs` of its ticket (and bytes whose
   * ticket is gone or does not parse): the embedded store's expiry (S3's lifecycle rule does it
   * on AWS). A ticket that could not be read now (the store did not answer) is left for the next
   * sweep with its bytes: its age is unknown. Returns how many objects went.
   */
  async sweep(maxAgeMs = UPLOAD_MAX_AGE_MS): Promise<number> {
    const keys = await this.blobs.list(PREFIXES.uploads);
    const tickets = new Set(keys.filter((k) => k.endsWith(".ticket")));
    const cutoff = this.clock().getTime() - maxAgeMs;
    const old: string[] = [];
    for (const key of tickets) {
      let text: string;
      try {
        text = new TextDecoder().decode(await this.blobs.get(key));
      } catch {
        continue; // taken meanwhile, or not read now
      }
      let createdAt = Number.NEGATIVE_INFINITY;
      try {
        createdAt = Date.parse((JSON.parse(text) as TicketRecord).createdAt);
      } catch {
        // Not a ticket this code wrote: nothing can claim its upload.
      }
      if (!(createdAt >= cutoff)) old.push(key, key.slice(0, -".ticket".length));
    }
    // Bytes whose ticket is gone were appended or swept: nothing claims them.
    for (const key of keys) if (!tickets.has(key) && !tickets.has(`${key}.ticket`)) old.push(key);
    if (old.length) await this.blobs.delete(old);
    return old.length;
  }

  /**
   * The user's open uploads: tickets of the last day whose URL still works or whose bytes are
   * kept. A ticket that can no longer be filled (its time over, no bytes) is removed on the way:
   * no append can take it, and the list stays as short as the open ones.
   */
  private async open(userId: string): Promise<{ count: number; bytes: number }> {
    const keys = await this.blobs.list(uploadKey(userId, ""));
    const present = new Set(keys);
    const now = this.clock().getTime();
    const dead: string[] = [];
    let count = 0;
    let bytes = 0;
    await Promise.all(
      keys
        .filter((key) => key.endsWith(".ticket"))
        .map(async (key) => {
          let ticket: TicketRecord;
          try {
            ticket = JSON.parse(new TextDecoder().decode(await this.blobs.get(key))) as TicketRecord;
          } catch (error) {
            if (error instanceof NotFoundError || error instanceof SyntaxError) return; // taken meanwhile; not ours
            throw error;
          }
          const filled = present.has(key.slice(0, -".ticket".length));
          if (Date.parse(ticket.createdAt) < now - UPLOAD_MAX_AGE_MS) return; // the sweep's
          if (!filled && Date.parse(ticket.expiresAt) < now) {
            dead.push(key);
            return;
          }
          count++;
          bytes += Number(ticket.length) || 0;
        }),
    );
    if (dead.length) await this.blobs.delete(dead).catch(() => {});
    return { count, bytes };
  }

  /** A ticket whose URL time lasts. */
  private async openTicket(userId: string, uploadId: string): Promise<TicketRecord> {
    const ticket = await this.ticket(userId, uploadId);
    if (Date.parse(ticket.expiresAt) < this.clock().getTime()) throw new NotFound("this upload's ticket has expired");
    return ticket;
  }

  private async ticket(userId: string, uploadId: string): Promise<TicketRecord> {
    const bytes = await this.read(ticketKey(userId, Uploads.check(uploadId)));
    return JSON.parse(new TextDecoder().decode(bytes)) as TicketRecord;
  }

  private async read(key: string): Promise<Uint8Array> {
    try {
      return await this.blobs.get(key);
    } catch (error) {
      if (error instanceof NotFoundError) throw new NotFound("no such upload (it may have expired)");
      throw error;
    }
  }

  /** @throws BadRequest `upload_mismatch` when `bytes` are not the ticket's length and hash */
  private static match(ticket: TicketRecord, bytes: Uint8Array): void {
    if (bytes.length !== ticket.length) {
      throw new BadRequest(`the upload is ${bytes.length} bytes, its ticket says ${ticket.length}`, "upload_mismatch");
    }
    if (createHash("sha256").update(bytes).digest("hex") !== ticket.sha256) {
      throw new BadRequest("the upload's SHA-256 is not its ticket's", "upload_mismatch");
    }
  }

  private static check(uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId)) throw new BadRequest("not an upload id", "invalid_upload_id");
    return uploadId;
  }
}
