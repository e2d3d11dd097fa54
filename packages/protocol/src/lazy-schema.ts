/**
 * Schemas built on their first use instead of at import: a cold start (the Lambda function's
 * first append) then pays only for the schemas its request validates, not for every shape of
 * the API (zod builds each schema, and every schema nested in it, when it is made).
 */

/**
 * The schema `build` makes, made on the first access to any of its properties; it stands for
 * that schema everywhere (parsing, nesting in other schemas, `instanceof`, `.shape`).
 */
export function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const schema = (): T => {
    built ??= build();
    return built;
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(schema(), key),
    set: (_, key, value) => Reflect.set(schema(), key, value),
    has: (_, key) => Reflect.has(schema(), key),
    ownKeys: () => Reflect.ownKeys(schema()),
    // Reported configurable: the proxy's own (empty) target cannot hold the schema's fixed keys.
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(schema(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
  });
}
