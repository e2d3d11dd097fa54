/**
 * A service whose module is loaded on its first call, so a cold start reads none of its code.
 * Only for services whose every member a caller uses is an async method: each member of the
 * returned object is a function that waits for the module, then calls the real method.
 *
 * @example
 * const teams = lazyService(async () => new (await import("@pisync/core/teams")).Teams(store));
 * await teams.list("alice"); // the first call loads the module
 */
export function lazyService<T extends object>(load: () => Promise<T>): T {
  let made: Promise<T> | undefined;
  const service = () => {
    made ??= load().catch((error: unknown) => {
      made = undefined; // a failed load (a chunk missing for a moment) is tried again next call
      throw error;
    });
    return made;
  };
  return new Proxy(Object.create(null) as T, {
    get(_target, name) {
      // Never a thenable: `await service` must give the service itself.
      if (name === "then" || typeof name === "symbol") return undefined;
      return async (...args: unknown[]) => {
        const real = (await service()) as Record<string, unknown>;
        const member = real[name];
        if (typeof member !== "function") throw new TypeError(`${name} is not a method of this service`);
        return member.apply(real, args);
      };
    },
  });
}
