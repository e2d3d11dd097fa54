/**
 * Domain errors: classes that carry data and a machine-readable code (`@pisync/protocol`'s
 * {@link ErrorCode}). The API maps each class to a status in one table
 * (functions/api/src/errors.ts) and answers `{ error, code }`; anything else is a bare 500.
 */
import type { ErrorCode } from "@pisync/protocol";

/** Base of every error a client may see the message and code of. */
export abstract class DomainError extends Error {
  /** The code clients decide on; the message is for people. */
  readonly code: ErrorCode;
  /** Fields the answer carries beside `error` and `code` (e.g. `maxSeconds`). */
  readonly fields: Record<string, number>;

  constructor(message: string, code: ErrorCode, fields: Record<string, number> = {}) {
    super(message);
    this.code = code;
    this.fields = fields;
  }
}

/**
 * The base of an error that carries only a message: its `name`, and the code it answers with
 * unless the thrower names a more precise one.
 */
function messageError<Name extends string>(name: Name, defaultCode: ErrorCode) {
  return class extends DomainError {
    override readonly name: Name = name;
    constructor(message: string, code: ErrorCode = defaultCode, fields?: Record<string, number>) {
      super(message, code, fields);
    }
  };
}

/** Missing, or another user's: the two must be indistinguishable. */
export class NotFound extends messageError("NotFound", "not_found") {}

/** The request is malformed: bad body, bad header, bad parameter. */
export class BadRequest extends messageError("BadRequest", "bad_request") {}

/** A body over a limit. */
export class TooLarge extends messageError("TooLarge", "too_large") {}

/** tus: the offset is not where the committed bytes end. Carries the committed length. */
export class OffsetConflict extends DomainError {
  override readonly name = "OffsetConflict";
  constructor(
    readonly committed: number,
    readonly generation: number,
  ) {
    super(`offset does not match: ${committed} bytes are committed`, "offset_conflict", {
      offset: committed,
      generation,
    });
  }
}

/** `If-Match` named another generation than the current one. */
export class GenerationMismatch extends DomainError {
  override readonly name = "GenerationMismatch";
  constructor(
    readonly generation: number,
    readonly committed: number,
  ) {
    super(`the current generation is ${generation}`, "generation_mismatch", { offset: committed, generation });
  }
}

/**
 * A rename whose stored first line is not a title slot of the body's length: the file's change
 * is not confined to its title slot (a new generation is what carries it).
 */
export class SlotMismatch extends messageError("SlotMismatch", "title_slot_mismatch") {}

/** Missing or unknown credentials. */
export class Unauthorized extends messageError("Unauthorized", "unauthorized") {}

/** Understood and refused: the credentials are fine, the request is not allowed (a cross-site change). */
export class Forbidden extends messageError("Forbidden", "csrf_rejected") {}

/** Something that existed and is no more (an expired or revoked share). */
export class Gone extends messageError("Gone", "gone") {}

/** A body the route does not take in this form (a compressed upload). */
export class UnsupportedMediaType extends messageError("UnsupportedMediaType", "upload_encoding") {}

/**
 * A per-user bound reached (open uploads, live tokens, guessed device codes): refused until the user frees some;
 * `retryAfter` seconds is when trying again may help.
 */
export class TooMany extends DomainError {
  override readonly name = "TooMany";
  constructor(
    message: string,
    code: ErrorCode,
    readonly retryAfter: number,
    fields: Record<string, number> = {},
  ) {
    super(message, code, fields);
  }
}

/** Too much contention right now (an append kept losing the race to others): try again after `retryAfter` seconds. */
export class Busy extends DomainError {
  override readonly name = "Busy";
  constructor(
    message: string,
    readonly retryAfter: number,
  ) {
    super(message, "busy");
  }
}
