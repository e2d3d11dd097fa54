/**
 * Domain errors: each class keeps its name (the API's status table and logs read it), its
 * default code, a more precise code when the thrower names one, and the fields it answers with.
 */
import { describe, expect, it } from "vitest";
import {
  BadRequest,
  Busy,
  DomainError,
  GenerationMismatch,
  Gone,
  NotFound,
  OffsetConflict,
  TooLarge,
  Unauthorized,
} from "../src/errors.js";

describe("domain errors", () => {
  it.each([
    [new NotFound("no such session"), "NotFound", "not_found"],
    [new BadRequest("bad body"), "BadRequest", "bad_request"],
    [new TooLarge("too big"), "TooLarge", "too_large"],
    [new Unauthorized("who are you"), "Unauthorized", "unauthorized"],
    [new Gone("revoked"), "Gone", "gone"],
    [new Busy("try later", 2), "Busy", "busy"],
  ] as const)("%s is named %s and answers %s by default", (error, name, code) => {
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.constructor.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.fields).toEqual({});
    expect(String(error)).toBe(`${name}: ${error.message}`);
  });

  it("keeps the classes apart: one is never an instance of another", () => {
    const classes = [NotFound, BadRequest, TooLarge, Unauthorized, Gone];
    for (const Made of classes) {
      const error = new Made("x");
      for (const Other of classes) expect(error instanceof Other).toBe(Other === Made);
    }
  });

  it("takes a more precise code, and fields beside it", () => {
    const error = new BadRequest("expires too late", "expiry_out_of_range", { maxSeconds: 60 });
    expect(error.code).toBe("expiry_out_of_range");
    expect(error.fields).toEqual({ maxSeconds: 60 });
    expect(new NotFound("no such route", "route_not_found").code).toBe("route_not_found");
  });

  it("carries the committed length and generation of a conflict", () => {
    const conflict = new OffsetConflict(120, 3);
    expect([conflict.name, conflict.code, conflict.committed, conflict.generation]).toEqual([
      "OffsetConflict",
      "offset_conflict",
      120,
      3,
    ]);
    expect(conflict.fields).toEqual({ offset: 120, generation: 3 });
    const mismatch = new GenerationMismatch(4, 80);
    expect([mismatch.name, mismatch.code, mismatch.message]).toEqual([
      "GenerationMismatch",
      "generation_mismatch",
      "the current generation is 4",
    ]);
    expect(mismatch.fields).toEqual({ offset: 80, generation: 4 });
    expect(new Busy("later", 5).retryAfter).toBe(5);
  });
});
