/**
 * Something made on its first use and kept: a module loaded on demand (in the Lambda bundle a
 * chunk of its own, which a cold start that does not need it never reads or compiles).
 */

/** A value loaded once, on the first {@link Lazy.load}. */
export interface Lazy<T> {
  /** Loads the value (once; a failed load is tried again on the next call). */
  load(): Promise<T>;
  /** The value if loaded, for code that runs synchronously after a {@link Lazy.load}. */
  loaded(): T | undefined;
}

/** Wraps `make` so that it runs once, when first needed (again only after a failure). */
export function lazy<T>(make: () => Promise<T>): Lazy<T> {
  let value: T | undefined;
  let loading: Promise<T> | undefined;
  return {
    load() {
      if (!loading) {
        loading = make().then((made) => {
          value = made;
          return made;
        });
        loading.catch(() => {
          loading = undefined;
        });
      }
      return loading;
    },
    loaded: () => value,
  };
}
