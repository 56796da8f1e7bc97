/**
 * `fn` with its results remembered for up to `limit` keys (then forgotten all at once). Each
 * scanner owns its validators, so a cache is never shared between threads.
 */
export function memoize<T>(fn: (key: string) => T, limit: number): (key: string) => T {
  const results = new Map<string, T>();
  return (key) => {
    const known = results.get(key);
    if (known !== undefined || results.has(key)) return known as T;
    if (results.size >= limit) results.clear();
    const result = fn(key);
    results.set(key, result);
    return result;
  };
}
