/**
 * The embedded adapters' errors as the ports' error contract names them: a full disk or quota
 * (the kernel's ENOSPC and EDQUOT, SQLite's SQLITE_FULL) is `StorageFullError`; a database
 * still locked after SQLite's busy timeout (any `SQLITE_BUSY…` or `SQLITE_LOCKED…`), or a
 * process out of file handles, is
 * `StorageUnavailableError` (it passes); anything else is left as it is.
 */
import { StorageFullError, StorageUnavailableError } from "../errors.js";

const FULL = new Set(["ENOSPC", "EDQUOT", "SQLITE_FULL"]);
const UNAVAILABLE = new Set(["SQLITE_BUSY", "SQLITE_LOCKED", "EMFILE", "ENFILE"]);
/** SQLite's code without its extension: `SQLITE_BUSY_SNAPSHOT` (a write after another connection's commit) is busy too. */
const primaryOf = (code: string) => /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;

/** `error` as the ports' contract names it (see the module's comment). */
export function classifyLocalError(error: unknown): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string") return error;
  if (FULL.has(primaryOf(code))) {
    return new StorageFullError("the server's disk is full: nothing of this write was kept", { cause: error });
  }
  if (UNAVAILABLE.has(primaryOf(code)))
    return new StorageUnavailableError(`the local store is busy (${code})`, { cause: error });
  return error;
}

/**
 * `target` with every method's errors (thrown, or a rejected promise) passed through
 * {@link classifyLocalError}; everything else is untouched.
 */
export function classifyingErrors<T extends object>(target: T): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        let result: unknown;
        try {
          result = value.apply(object, args);
        } catch (error) {
          throw classifyLocalError(error);
        }
        return result instanceof Promise
          ? result.catch((error: unknown) => {
              throw classifyLocalError(error);
            })
          : result;
      };
    },
  });
}
