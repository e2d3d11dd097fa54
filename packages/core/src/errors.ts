/**
 * Domain errors: classes that carry data. The API maps each to a status code in one table
 * (functions/api/src/errors.ts); anything else is a bare 500.
 */

/** Base of every error a client may see the message of. */
export class DomainError extends Error {}

/** Missing, or another user's: the two must be indistinguishable. */
export class NotFound extends DomainError {
  override readonly name = "NotFound";
}

/** The request is malformed: bad body, bad header, bad parameter. */
export class BadRequest extends DomainError {
  override readonly name = "BadRequest";
}

/** A body over a limit. */
export class TooLarge extends DomainError {
  override readonly name = "TooLarge";
}

/** tus: the offset is not where the committed bytes end. Carries the committed length. */
export class OffsetConflict extends DomainError {
  override readonly name = "OffsetConflict";
  constructor(
    readonly committed: number,
    readonly generation: number,
  ) {
    super(`offset does not match: ${committed} bytes are committed`);
  }
}

/** `If-Match` named another generation than the current one. */
export class GenerationMismatch extends DomainError {
  override readonly name = "GenerationMismatch";
  constructor(
    readonly generation: number,
    readonly committed: number,
  ) {
    super(`the current generation is ${generation}`);
  }
}

/** Missing or unknown credentials. */
export class Unauthorized extends DomainError {
  override readonly name = "Unauthorized";
}

/** Something that existed and is no more (an expired or revoked share). */
export class Gone extends DomainError {
  override readonly name = "Gone";
}

/** Too much contention right now (an append kept losing the race to others): try again after `retryAfter` seconds. */
export class Busy extends DomainError {
  override readonly name = "Busy";
  constructor(
    message: string,
    readonly retryAfter: number,
  ) {
    super(message);
  }
}
