/**
 * What the writers know of each session: the bytes the server acknowledged, at their offsets.
 * The stored copy must hold exactly those bytes, in order, and nothing else.
 */

/** One session's acknowledged bytes. */
export class SessionModel {
  /** Acknowledged appends by offset. */
  readonly chunks = new Map<number, Buffer>();
  /** The end of the acknowledged bytes. */
  end = 0;
  /** The id of the session's last entry (for the next line's parent). */
  last: string | null = null;
  /** Why writers stopped writing it (the server went behind or ahead of what it acknowledged). */
  broken?: string;
  /** An append given up unanswered: the stored copy may end with these bytes at this offset. */
  uncertain?: { offset: number; bytes: Buffer };

  constructor(
    readonly id: string,
    readonly shared = false,
  ) {}

  acknowledge(offset: number, bytes: Buffer): void {
    this.chunks.set(offset, bytes);
    this.end = Math.max(this.end, offset + bytes.length);
  }

  /** The acknowledged bytes, in order. Throws when they do not tile `[0, end)` (a writer's bug). */
  bytes(): Buffer {
    const offsets = [...this.chunks.keys()].sort((a, b) => a - b);
    let at = 0;
    const parts: Buffer[] = [];
    for (const offset of offsets) {
      if (offset !== at) throw new Error(`${this.id}: acknowledged bytes leave a gap at ${at} (next at ${offset})`);
      const chunk = this.chunks.get(offset) as Buffer;
      parts.push(chunk);
      at += chunk.length;
    }
    return Buffer.concat(parts);
  }
}
